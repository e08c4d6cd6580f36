"""The Sources pane: where live traces come from, and whether each way in is working.

A table of sources (any ``core/live/source.py:Source``: name, state, address, traces seen,
errors, calls recorded, the last error as a tooltip), refreshed twice a second; under it
the watched folders (the tools' own folders, and folders the user added and may remove)
and the switches for the folder watcher, the OTLP receiver and the recording proxy (its
listen address and upstream URL).

The table is exactly as tall as its rows (``SourcesPane.fit_table``: up to
``ROWS_SHOWN``, its horizontal scroll bar counted) and the controls under it scroll, so a
short dock never squeezes the sources to one visible row (review 6: three sources on, the
table showed "Watched folders" and a scroll bar).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.errors import CtxlensError
from core.live.otlp_server import parse_address
from core.live.source import SourceStatus
from ui.live import LiveSources
from ui.panes.common import RecordTable
from ui.panes.table_model import Column, RecordTableModel
from ui.widgets import wrapped_label

STATE_COLORS = {
    "running": "#3f9a54",
    "listening": "#3f9a54",
    "error": "#c0392b",
    "starting": "#b7950b",
}

SOURCE_COLUMNS: list[Column[SourceStatus]] = [
    Column("Source", lambda s: s.name, tooltip=lambda s: s.last_error or s.address),
    Column("State", lambda s: s.state, color=lambda s: STATE_COLORS.get(s.state)),
    Column("Traces", lambda s: f"{s.traces_seen:,}", align_right=True),
    Column(
        "Errors",
        lambda s: f"{s.errors:,}",
        align_right=True,
        tooltip=lambda s: s.last_error or "no errors",
        color=lambda s: "#c0392b" if s.errors else None,
    ),
    Column(
        "Calls",
        lambda s: "" if s.calls is None else f"{s.calls:,}",
        align_right=True,
        tooltip=lambda s: "model calls recorded" if s.calls is not None else "",
    ),
    Column("Address", lambda s: s.address, tooltip=lambda s: s.address),
]
ADDRESS_COLUMN = len(SOURCE_COLUMNS) - 1
ROWS_SHOWN = 6
"""Sources listed without scrolling (the pane's own three, and room for added ones)."""


class SourcesPane(QWidget):
    failed = Signal(object)

    def __init__(self, live: LiveSources, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sourcesPane")
        self.live = live
        self.model: RecordTableModel[SourceStatus] = RecordTableModel(SOURCE_COLUMNS, self)
        self.table = RecordTable(self.model, "Open a store to capture live traces.")
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(ADDRESS_COLUMN, QHeaderView.ResizeMode.Stretch)
        for col in range(ADDRESS_COLUMN):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.installEventFilter(self)  # its width decides its horizontal scroll bar
        self._build_controls()
        controls = QWidget()
        inner = QVBoxLayout(controls)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(self._watch_row)
        inner.addWidget(self.folder_list, 1)
        inner.addLayout(self._folder_buttons)
        inner.addLayout(self._otlp_row)
        inner.addWidget(self.endpoint)
        inner.addLayout(self._proxy_row)
        inner.addWidget(self.proxy_upstream)
        inner.addWidget(self.proxy_hint)
        self.controls = QScrollArea()
        self.controls.setObjectName("sourcesControls")
        self.controls.setFrameShape(QFrame.Shape.NoFrame)
        self.controls.setWidgetResizable(True)
        self.controls.setWidget(controls)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.table)
        layout.addWidget(self.controls, 1)
        self.timer = QTimer(self)
        self.timer.setInterval(500)
        self.timer.timeout.connect(self.refresh)
        live.session.closing.connect(self.timer.stop)
        live.sources_changed.connect(self.refresh)
        live.sources_changed.connect(self._fill_folders)
        self._fill_folders()
        self.refresh()

    def _build_controls(self) -> None:
        self.watch_box = QCheckBox("Watch session folders")
        self.watch_box.setToolTip(
            "Tail Claude Code and Codex session files into this store as they are written"
        )
        self.watch_box.toggled.connect(self.live.set_watching)
        self._watch_row = QHBoxLayout()
        self._watch_row.addWidget(self.watch_box, 1)
        self.folder_list = QListWidget()
        self.folder_list.setObjectName("watchedFolders")
        self.folder_list.currentItemChanged.connect(self._folder_chosen)
        self.add_button = QPushButton("Add folder…")
        self.add_button.clicked.connect(self.choose_folder)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setEnabled(False)
        self.remove_button.clicked.connect(self.remove_selected)
        self._folder_buttons = QHBoxLayout()
        self._folder_buttons.addStretch(1)
        self._folder_buttons.addWidget(self.add_button)
        self._folder_buttons.addWidget(self.remove_button)
        self.otlp_box = QCheckBox("OTLP receiver on")
        self.otlp_box.setToolTip("Receive OpenTelemetry traces (OTLP/HTTP, POST /v1/traces)")
        self.otlp_box.toggled.connect(self._otlp_toggled)
        host, port = self.live.otlp_address
        self.otlp_edit = QLineEdit(f"{host}:{port}")
        self.otlp_edit.setToolTip("Host and port; loopback unless you give another host")
        self._otlp_row = QHBoxLayout()
        self._otlp_row.addWidget(self.otlp_box)
        self._otlp_row.addWidget(self.otlp_edit, 1)
        self.endpoint = _note("otlpEndpoint")
        self._build_proxy()

    def _build_proxy(self) -> None:
        self.proxy_box = QCheckBox("Proxy on")
        self.proxy_box.setObjectName("proxyOn")
        self.proxy_box.setToolTip(
            "Record every model call an agent makes: point its base URL at the listen address"
        )
        self.proxy_box.setChecked(self.live.proxying)
        self.proxy_box.toggled.connect(self._proxy_toggled)
        self.proxy_listen = QLineEdit(self.live.proxy_listen)
        self.proxy_listen.setObjectName("proxyListen")
        self.proxy_listen.setToolTip("Listen address, HOST:PORT (loopback unless you say)")
        self.proxy_upstream = QLineEdit(self.live.proxy_upstream)
        self.proxy_upstream.setObjectName("proxyUpstream")
        self.proxy_upstream.setPlaceholderText("Upstream URL, e.g. https://api.openai.com/v1")
        self.proxy_upstream.setToolTip(
            "Where the proxy forwards requests (OpenAI Chat/Responses, Anthropic Messages)"
        )
        self._proxy_row = QHBoxLayout()
        self._proxy_row.addWidget(self.proxy_box)
        self._proxy_row.addWidget(self.proxy_listen, 1)
        self.proxy_hint = _note("proxyEndpoint")
        self._proxy_edits_enabled()

    # -- state --------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.timer.start()  # counters tick only while someone can see them

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self.timer.stop()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.table and event.type() == QEvent.Type.Resize:
            self.fit_table()
        return super().eventFilter(obj, event)

    def fit_table(self) -> None:
        """Make the table as tall as its header and rows (at most ``ROWS_SHOWN``; two for
        the empty text), plus its horizontal scroll bar when the columns are wider than it:
        a fixed height, so the layout gives the space it lacks to the controls, which
        scroll, never to the sources."""
        t = self.table
        count = self.model.rowCount()
        rows = min(count, ROWS_SHOWN) if count else 2
        header = t.horizontalHeader()
        frame = 2 * t.frameWidth()
        height = frame + header.sizeHint().height() + rows * t.verticalHeader().defaultSectionSize()
        if header.length() > t.width() - frame:
            height += t.horizontalScrollBar().sizeHint().height()
        if t.height() != height:
            t.setFixedHeight(height)

    def refresh(self) -> None:
        rows = [s.status() for s in self.live.sources()]
        self.model.set_records(rows)
        self.fit_table()
        otlp = next((r for r in rows if r.kind == "otlp" and r.state == "running"), None)
        self.endpoint.setText(f"Exporters send to {otlp.address}" if otlp else "")
        self.endpoint.setVisible(otlp is not None)
        if self.proxy_box.isChecked() != self.live.proxying:  # a remembered proxy started
            self.proxy_box.blockSignals(True)
            self.proxy_box.setChecked(self.live.proxying)
            self.proxy_box.blockSignals(False)
            self._proxy_edits_enabled()
        proxy = next((r for r in rows if r.kind == "proxy"), None)
        self.proxy_hint.setText(_proxy_hint(proxy, self.live.proxy.url if self.live.proxy else ""))
        self.proxy_hint.setVisible(proxy is not None)

    def _fill_folders(self) -> None:
        self.folder_list.clear()
        for folder, added in self.live.folders():
            label = str(folder) if added else f"{folder}  (tool folder)"
            item = QListWidgetItem(label)
            item.setData(256, (str(folder), added))
            if not folder.exists():
                item.setToolTip("does not exist yet: watched once it appears")
            self.folder_list.addItem(item)

    def _folder_chosen(self, item: QListWidgetItem | None) -> None:
        self.remove_button.setEnabled(item is not None and bool(item.data(256)[1]))

    # -- commands -----------------------------------------------------------------------
    def choose_folder(self) -> None:
        dialog = QFileDialog(self, "Watch folder", str(Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.fileSelected.connect(lambda path: self.live.add_folder(Path(path)))
        self.dialog = dialog
        dialog.open()

    def remove_selected(self) -> None:
        item = self.folder_list.currentItem()
        if item is not None and item.data(256)[1]:
            self.live.remove_folder(Path(item.data(256)[0]))

    def _otlp_toggled(self, on: bool) -> None:
        try:
            address = parse_address(self.otlp_edit.text()) if on else None
            self.live.set_receiving(on, address)
        except CtxlensError as exc:
            self.otlp_box.blockSignals(True)
            self.otlp_box.setChecked(False)
            self.otlp_box.blockSignals(False)
            self.failed.emit(exc)
        self.otlp_edit.setEnabled(not self.otlp_box.isChecked())

    def _proxy_toggled(self, on: bool) -> None:
        try:
            self.live.set_proxy(on, self.proxy_listen.text(), self.proxy_upstream.text())
        except CtxlensError as exc:
            self.proxy_box.blockSignals(True)
            self.proxy_box.setChecked(False)
            self.proxy_box.blockSignals(False)
            self.failed.emit(exc)
        self._proxy_edits_enabled()

    def _proxy_edits_enabled(self) -> None:
        off = not self.proxy_box.isChecked()
        self.proxy_listen.setEnabled(off)
        self.proxy_upstream.setEnabled(off)


def _note(name: str) -> QLabel:
    """A line under a switch that says where to send data (selectable, to copy it)."""
    label = wrapped_label(name=name)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _proxy_hint(status: SourceStatus | None, url: str) -> str:
    if status is None:
        return ""
    if status.state == "listening":
        calls = status.calls or 0
        return (
            f"Agents send to {url} (OpenAI SDKs: …/v1) · "
            f"{calls:,} call{'' if calls == 1 else 's'} recorded"
        )
    if status.state == "error":
        return f"Proxy not listening: {status.last_error}"
    return f"Proxy {status.state}"
