"""Compact… (UI-6, CMP-8): choose a level or layer, preview the dry run, apply or cancel.

The preview runs on the task runner (``core/inspector/compaction.py:run_preview``, its own
event loop in a worker thread), so the window never blocks, even while a model writes a
summary. The dialog shows the context before and after side by side, the tokens saved and
the retention report; Apply records exactly what was previewed
(``core/inspector/compaction.py:commit``). The dialog is opened with ``open()``, never
``exec()``.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.context.compaction import ALL_LEVELS
from core.inspector.compaction import (
    GOAL_MODES,
    CompactPreview,
    CompactRequest,
    RetentionRow,
    commit,
    full_text,
    level_help_for,
    model_from_env,
    request_for,
    retention_summary,
    run_preview,
    summarizer_label,
)
from ui.dialogs.diff_model import DiffModel
from ui.dialogs.form import token_box
from ui.panes.common import RecordTable
from ui.panes.table_model import Column, RecordTableModel
from ui.session import Session
from ui.split_pages import labelled_page, splitter
from ui.tasks import TaskControl, TaskRunner
from ui.theme import accent_note
from ui.widgets import wrapped_label

LOST, KEPT = "#c0392b", None
RETENTION_COLUMNS: list[Column[RetentionRow]] = [
    Column("", lambda r: "kept" if r.kept else "LOST", color=lambda r: KEPT if r.kept else LOST),
    Column("Field", lambda r: r.label),
    Column("Fact", lambda r: r.fact, tooltip=lambda r: r.fact),
]
LEGEND = (
    "<span style='background:rgba(210,70,70,0.25)'>&nbsp;− removed&nbsp;</span> struck out "
    "&nbsp; <span style='background:rgba(217,165,32,0.3)'>&nbsp;~ replaced&nbsp;</span> "
    "placeholder on the right &nbsp; "
    "<span style='background:rgba(46,157,98,0.3)'>&nbsp;+ added&nbsp;</span> new in the "
    "context. Click a row to read both sides in full."
)


class CompactDialog(QDialog):
    previewed = Signal(object)
    """A ``CompactPreview`` arrived."""
    applied = Signal(object)
    """The preview was recorded: a ``CompactPreview`` whose ``preview.event`` is set."""
    failed = Signal(object)

    def __init__(
        self, session: Session, runner: TaskRunner, level: str | None = None,
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("compactDialog")
        self.setWindowTitle("Compact the context")
        self.session, self.runner = session, runner
        self.model_settings = model_from_env()
        self.current: CompactPreview | None = None
        trace = session.trace()
        self.trace_id = trace.id if trace is not None else None
        defaults = request_for(
            trace.metadata if trace is not None else None,
            level or "auto",
            trace.source if trace is not None else "ctxlens",
        )
        self.defaults = defaults
        self.title = trace.title if trace is not None else ""
        self._build(defaults, self.title)
        self.resize(1240, 800)

    # -- layout ---------------------------------------------------------------------------
    def _build(self, req: CompactRequest, title: str) -> None:
        self.level = QComboBox()
        self.level.setObjectName("compactLevel")
        for name in ALL_LEVELS:
            self.level.addItem(name, name)
        self.level.setCurrentIndex(max(0, self.level.findData(req.level)))
        self.window_box = token_box(256, 10_000_000, 1024, req.window)
        self.threshold_box = QDoubleSpinBox()
        self.threshold_box.setRange(0.01, 1.0)
        self.threshold_box.setSingleStep(0.05)
        self.threshold_box.setDecimals(3)
        self.threshold_box.setPrefix("× ")
        self.threshold_box.setValue(req.threshold)
        self.goal_mode = QComboBox()
        for mode in GOAL_MODES:
            self.goal_mode.addItem(mode, mode)
        self.goal_mode.setCurrentIndex(self.goal_mode.findData(req.goal_mode))
        self.preview_button = QPushButton("Preview")
        self.preview_button.setObjectName("previewButton")
        self.preview_button.clicked.connect(self.preview)
        self.level.currentIndexChanged.connect(self._level_changed)
        self.goal_mode.currentIndexChanged.connect(self.preview)
        self.window_box.editingFinished.connect(self.preview)
        self.threshold_box.editingFinished.connect(self.preview)
        self.window_box.editingFinished.connect(self._describe_level)
        self.threshold_box.editingFinished.connect(self._describe_level)
        self.window_box.setToolTip(
            f"Context window the threshold is a share of (this trace's: {req.limits_text})"
        )
        self.threshold_box.setToolTip("Compact above this share of the window (auto, summary)")
        self.goal_mode.setToolTip("When goal compaction runs inside auto")

        form = QHBoxLayout()
        for label, widget in (
            ("Level", self.level),
            ("Window", self.window_box),
            ("Threshold", self.threshold_box),
            ("Goal mode", self.goal_mode),
        ):
            form.addWidget(QLabel(label))
            form.addWidget(widget)
            form.addSpacing(8)
        form.addStretch(1)
        form.addWidget(self.preview_button)

        self.trace_label = QLabel(f"Trace: {title or self.trace_id or '—'}")
        self.trace_label.setObjectName("compactTrace")
        self.help = wrapped_label()
        self.help.setObjectName("compactHelp")
        self.summarizer = QLabel("")
        self.summarizer.setObjectName("compactSummarizer")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(140)
        self.busy.setVisible(False)
        self.headline = wrapped_label(name="compactHeadline")
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.headline.setStyleSheet("QLabel#compactHeadline { font-weight: bold; }")
        self.error = accent_note("compactError", "error")
        status = QHBoxLayout()
        status.addWidget(self.headline, 1)
        status.addWidget(self.busy)
        legend = wrapped_label(LEGEND)

        self.diff = DiffModel(self)
        self.table = QTableView()
        self.table.setObjectName("compactDiff")
        self.table.setModel(self.diff)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(False)
        self.table.setShowGrid(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        for col, width in ((0, 44), (2, 48), (3, 22), (4, 44), (6, 48)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            self.table.setColumnWidth(col, width)
        for col in (1, 5):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().selectionChanged.connect(self._row_selected)

        self.retention_label = wrapped_label(name="retentionSummary")
        self.retention: RecordTableModel[RetentionRow] = RecordTableModel(RETENTION_COLUMNS, self)
        self.retention_table = RecordTable(
            self.retention, "Nothing to report: no refs, constraints, steps or skills were visible."
        )
        self.retention_table.setObjectName("retentionTable")
        self.retention_table.setColumnWidth(0, 56)
        self.retention_table.setColumnWidth(1, 130)
        ret_page = labelled_page(self.retention_label, self.retention_table)
        self.before_text = _reader("Select a row to read the message before the compaction.")
        self.after_text = _reader("…and what the model reads after it.")
        row_page = splitter(Qt.Orientation.Horizontal, [self.before_text, self.after_text])
        self.tabs = QTabWidget()
        self.tabs.addTab(ret_page, "Retention report")
        self.tabs.addTab(row_page, "Selected row")

        split = splitter(Qt.Orientation.Vertical, [self.table, self.tabs], (3, 1), (520, 200))

        self.buttons = QDialogButtonBox()
        self.apply_button = self.buttons.addButton("Apply", QDialogButtonBox.ButtonRole.AcceptRole)
        self.apply_button.setObjectName("applyButton")
        self.apply_button.setToolTip(
            "Record this compaction as a boundary. The store keeps every message; "
            "rewinding before the boundary brings them back."
        )
        self.apply_button.setEnabled(False)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.apply_button.clicked.connect(self.apply)
        self.cancel_button.clicked.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.trace_label)
        layout.addLayout(form)
        layout.addWidget(self.help)
        layout.addWidget(self.summarizer)
        layout.addLayout(status)
        layout.addWidget(self.error)
        layout.addWidget(legend)
        layout.addWidget(split, 1)
        layout.addWidget(self.buttons)
        self._describe_level()

    # -- requests -------------------------------------------------------------------------
    def request(self) -> CompactRequest:
        """The boxes' values over the trace's defaults; a value the user changed says
        ``option`` as its source (the threshold shown rounded keeps the exact default)."""
        d = self.defaults
        window, shown = self.window_box.value(), self.threshold_box.value()
        same_window = window == d.window
        same_share = round(shown, self.threshold_box.decimals()) == round(
            d.threshold, self.threshold_box.decimals()
        )
        kept = same_share and (same_window or d.threshold_source != "auto-compact point")
        return replace(
            d,
            level=str(self.level.currentData()),
            window=window,
            window_source=d.window_source if same_window else "option",
            threshold=d.threshold if same_share else round(shown, 4),
            threshold_source=d.threshold_source if kept else "option",
            goal_mode=str(self.goal_mode.currentData()),
        )

    def _level_changed(self) -> None:
        self._describe_level()
        self.preview()

    def _describe_level(self) -> None:
        level = str(self.level.currentData())
        self.help.setText(level_help_for(self.request()))
        uses_model = level in ("summary", "auto")
        self.summarizer.setText(f"Summary written by: {summarizer_label(self.model_settings)}")
        self.summarizer.setVisible(uses_model)

    def preview(self) -> None:
        store, trace_id = self.session.store, self.trace_id
        if store is None or trace_id is None:
            self._fail(RuntimeError("no trace is open"))
            return
        req, model = self.request(), self.model_settings
        self.error.setVisible(False)
        self._submit(
            f"compaction preview ({req.level})",
            lambda _c: run_preview(store, trace_id, req, model),
            self._previewed,
            "compact-preview",
        )

    def _previewed(self, cp: CompactPreview) -> None:
        self.headline.setText(cp.headline())
        self.trace_label.setText(
            f"Trace: {self.title or self.trace_id or '—'} · {cp.request.limits_text}"
        )
        self.diff.set_rows(cp.rows)
        self.retention.set_records(cp.retention)
        self.retention_label.setText(_retention_html(cp))
        self.apply_button.setEnabled(cp.can_apply)
        self.before_text.setPlainText("")
        self.after_text.setPlainText("")
        first = next((n for n, r in enumerate(cp.rows) if r.status != "kept"), None)
        if first is not None:
            top = QAbstractItemView.ScrollHint.PositionAtTop
            self.table.scrollTo(self.diff.index(first, 1), top)
        self.previewed.emit(cp)

    def apply(self) -> None:
        store, cp = self.session.store, self.current
        if store is None or cp is None or not cp.can_apply:
            return
        self._submit(
            f"apply {cp.request.level} compaction",
            lambda _c: commit(store, cp),
            self._applied,
            "compact-apply",
        )

    def _applied(self, cp: CompactPreview) -> None:
        self.applied.emit(cp)
        self.accept()

    def _submit(
        self,
        label: str,
        work: Callable[[TaskControl], CompactPreview],
        then: Callable[[CompactPreview], None],
        key: str,
    ) -> None:
        """Run ``work`` off the UI thread, busy and without Apply meanwhile; its preview
        becomes ``current`` before ``then`` sees it (a failure goes to ``_fail``)."""
        self._busy(True)
        self.apply_button.setEnabled(False)

        def done(cp: CompactPreview) -> None:
            self._busy(False)
            self.current = cp
            then(cp)

        self.runner.submit(label, work, done, on_error=self._fail, key=key)

    def _fail(self, exc: BaseException) -> None:
        self._busy(False)
        self.error.setText(f"{type(exc).__name__}: {exc}")
        self.error.setVisible(True)
        self.failed.emit(exc)

    def _busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.preview_button.setEnabled(not busy)
        if busy:
            self.headline.setText("Computing the dry run… (nothing is written)")

    def _row_selected(self, selected: QItemSelection, _old: Any) -> None:
        cp = self.current
        rows = selected.indexes()
        if cp is None or not rows:
            return
        index = rows[0].row()
        self.before_text.setPlainText(full_text(cp, index, "before") or "(not in the context)")
        self.after_text.setPlainText(full_text(cp, index, "after") or "(left the context)")
        self.tabs.setCurrentIndex(1)

    def done(self, result: int) -> None:
        self.runner.cancel("compact-preview")
        super().done(result)


#: Lost facts the retention line names; the rest are counted (every one is a table row).
LOST_NAMED = 8


def _retention_html(cp: CompactPreview) -> str:
    """The retention line, what brings lost skills back, and the lost facts in red: the
    first ``LOST_NAMED`` (skills, constraints and the task goal before refs), then how many
    more the table below lists. All 60 named in one label ran past its page and hid the
    line about skills (screenshot review)."""
    lost = [r for r in cp.retention if not r.kept]
    text = html.escape(retention_summary(cp.preview.retention, name_lost=False))
    if not lost:
        return text
    if any(r.field == "skills" for r in lost):
        text += (
            "<br>Lost skills come back before the next model call when the run asked for "
            "them (skill re-injection)."
        )
    first = sorted(lost, key=lambda r: r.field == "refs")[:LOST_NAMED]  # (a stable sort)
    names = ", ".join(f"{html.escape(r.label.lower())} <i>{html.escape(r.fact)}</i>" for r in first)
    more = len(lost) - len(first)
    if more:
        names += f" and {more:,} more (every lost fact is a row below)"
    return f"{text}<br><span style='color:{LOST}'><b>Lost:</b> {names}</span>"


def _reader(placeholder: str) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setPlaceholderText(placeholder)
    return box
