"""The "Search all traces" window: a query box, the hits, open a hit in the inspector.

The query runs on the task runner (the full-text index may first take in new messages);
typing restarts it after a short pause, and a bad filter is shown in the status line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.errors import CtxlensError
from core.search.engine import Results, search
from core.search.query import parse
from core.store import Store
from ui.search.model import HitsModel
from ui.tasks import TaskRunner

HELP = (
    "Words search message text and tool calls in every trace (whole words; rend* for a "
    "prefix). Filters: tool:NAME role:tool "
    "kind:summary goal:1.2 model:gpt-4o source:codex after:2025-01-01 before:2025-02-01 "
    "has:compaction has:error cost>0.5 tokens>100000 trace:ID"
)


class SearchWindow(QDialog):
    open_hit = Signal(str, object)
    """(trace id, sequence or ``None``): the user chose a hit."""

    def __init__(
        self, store: Callable[[], Store | None], runner: TaskRunner, parent: QWidget | None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Search all traces")
        self.store, self.runner = store, runner
        self.box = QLineEdit(placeholderText="Search every trace…  (e.g. render_chart has:error)")
        self.box.setToolTip(HELP)
        self.box.setClearButtonEnabled(True)
        self.status = QLabel(HELP, wordWrap=True)
        self.model = HitsModel()
        self.table = self._table()
        layout = QVBoxLayout(self)
        for w in (self.box, self.status, self.table):
            layout.addWidget(w)
        self.resize(900, 520)
        self.timer = QTimer(self, singleShot=True, interval=250)
        self.timer.timeout.connect(self.run)
        self.box.textChanged.connect(lambda _t: self.timer.start())
        self.box.returnPressed.connect(self.run)
        self.table.activated.connect(self._activated)
        close = QShortcut(QKeySequence("Ctrl+W"), self)
        close.activated.connect(self.close)

    def _table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.model)
        table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        table.setWordWrap(False)
        table.verticalHeader().hide()
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((260, 120, 110)):
            table.setColumnWidth(column, width)
        return table

    def run(self) -> None:
        self.timer.stop()
        text, store = self.box.text().strip(), self.store()
        if not text or store is None:
            self.model.set_hits(())
            self.status.setText(HELP if store else "No store is open.")
            return
        try:
            query = parse(text)
        except CtxlensError as exc:
            self.status.setText(str(exc))
            return
        self.status.setText("Searching…")
        self.runner.submit(
            "search all traces",
            lambda _c: search(store, query),
            self._show,
            on_error=lambda exc: self.status.setText(f"Search failed: {exc}"),
            key="search-all",
        )

    def _show(self, result: Any) -> None:
        assert isinstance(result, Results)
        self.model.set_hits(result.hits)
        more = " (showing the newest; narrow the query for more)" if result.truncated else ""
        traces = len({h.trace_id for h in result.hits})
        self.status.setText(
            f"{len(result.hits)} hits in {traces} traces, {result.elapsed_ms:.0f} ms{more}"
        )

    def _activated(self, index: QModelIndex) -> None:
        hit = self.model.hits[index.row()]
        self.open_hit.emit(hit.trace_id, hit.sequence)

    def keyPressEvent(self, event: Any) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
            return
        super().keyPressEvent(event)
