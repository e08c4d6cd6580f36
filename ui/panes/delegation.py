"""Delegation pane (issue 15): the delegation tree of the trace on view.

One row per trace of the tree (``core/inspector/delegation.py:delegation_tree``): its tree
path, anchor hash, brief version with characters against the limit, refs held against the
limits, and the validator verdict with the packet's characters against its budget. Beside
the tree (under it when the pane is narrow), the selected trace in full: brief versions and
the diff between the last two, each ref (granted by whom, at which sequence, read or not,
dropped why), the packet's parts and what was left out. Clicking a row opens that trace.
Loads off the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QFontDatabase, QResizeEvent
from PySide6.QtWidgets import (
    QHeaderView,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.inspector.delegation import (
    DelegationRow,
    brief_cell,
    delegation_tree,
    no_tree_note,
    node_detail,
    refs_cell,
    short,
    verdict_cell,
)
from ui.panes.common import LOADING, NO_TRACE, clickable_tree, empty_label
from ui.panes.table_model import horizontal_header
from ui.panes.tree_model import PositionTreeModel
from ui.session import Session
from ui.tasks import TaskRunner, reading

if TYPE_CHECKING:
    from core.store.reader import Reader

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Trace", "Anchor", "Brief", "Refs", "Validator")
EMPTY_TEXT = "This trace is not part of a delegation tree (ctxlens demo --scenario delegation)."
"""A ctxlens run outside any tree; the pane shows ``core/inspector/delegation.py:no_tree_note``
(the same, or what another tool's trace records instead: its subagent branches)."""
TraceRole = Qt.ItemDataRole.UserRole + 1
WIDE = 1000
"""Pane width (px) from which the detail sits beside the tree."""


class DelegationTreeModel(PositionTreeModel):
    """Rows of a delegation tree, one record per ``DelegationRow`` in ``rows``."""

    headers = HEADERS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[DelegationRow] = []
        self.current: str | None = None

    def set_rows(self, rows: list[DelegationRow], current: str | None) -> None:
        self.beginResetModel()
        self.rows, self.current = list(rows), current
        self.set_parents(0 if row.parent is None else row.parent + 1 for row in self.rows)
        self.endResetModel()

    def row_at(self, index: Index) -> DelegationRow | None:
        return self.rows[index.internalId() - 1] if index.isValid() else None

    def index_of(self, trace_id: str) -> QModelIndex:
        for pos, row in enumerate(self.rows, start=1):
            if row.trace_id == trace_id:
                return self.index_at(pos)
        return QModelIndex()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row_at(index)
        if row is None:
            return None
        n = row.data
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return _cell(n, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{n['name']} — trace {n['trace_id']}\nClick to open this trace."
        if role == Qt.ItemDataRole.FontRole and n["trace_id"] == self.current:
            font = QFont()
            font.setBold(True)
            return font
        if role == TraceRole:
            return n["trace_id"]
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return horizontal_header(HEADERS, section, orientation, role)


def _cell(n: dict[str, Any], col: int) -> str:
    if col == 0:
        return str(n["name"]).rsplit("/", 1)[-1]
    if col == 1:
        return short(n["anchor"]["sha256"], 10)
    return (brief_cell, refs_cell, verdict_cell)[col - 2](n)


class DelegationPane(QWidget):
    open_trace = Signal(str)
    loaded = Signal()

    def __init__(self, session: Session, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("delegationPane")
        self.session, self.runner = session, runner
        self.model = DelegationTreeModel(self)
        self.tree = clickable_tree(self.model, "delegationTree", self._clicked)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.detail = QPlainTextEdit()
        self.detail.setObjectName("delegationDetail")
        self.detail.setReadOnly(True)
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.empty = empty_label(NO_TRACE)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.detail)
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(split, 1)
        layout.addWidget(self.empty, 1)
        self._show(None)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Tree beside the detail when the pane is wide, above it when narrow."""
        wide = event.size().width() >= WIDE
        want = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.split.orientation() != want:
            self.split.setOrientation(want)
            self.split.setSizes([590, 510] if wide else [130, 200])
        super().resizeEvent(event)

    def reload(self) -> None:
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            self._show(None)
            return
        if not self.model.rows:
            self.empty.setText(LOADING)
        self.runner.submit(
            "delegation",
            reading(store, _tree_or_note, trace_id),
            lambda loaded: self._show(loaded[0], loaded[1], trace_id),
            key="delegation",
        )

    def _show(
        self, rows: list[DelegationRow] | None, note: str = "", current: str | None = None
    ) -> None:
        self.empty.setText(note or (EMPTY_TEXT if current else NO_TRACE))
        self.model.set_rows(rows or [], current)
        self.tree.expandAll()
        self.split.setVisible(bool(rows))
        self.empty.setVisible(not rows)
        index = self.model.index_of(current) if current else QModelIndex()
        if index.isValid():
            self.tree.setCurrentIndex(index)
        self._describe(self.model.row_at(index))
        self.loaded.emit()

    def _describe(self, row: DelegationRow | None) -> None:
        names = {r.trace_id: str(r.data["name"]) for r in self.model.rows}
        self.detail.setPlainText(node_detail(row.data, names) if row else "")

    def _clicked(self, index: QModelIndex) -> None:
        row = self.model.row_at(index)
        if row is None:
            return
        self._describe(row)
        if row.trace_id != self.session.trace_id:
            self.open_trace.emit(row.trace_id)


def _tree_or_note(r: Reader, trace_id: str) -> tuple[list[DelegationRow] | None, str]:
    """The tree the trace belongs to, or (``None``) what the pane says instead."""
    rows = delegation_tree(r, trace_id)
    return rows, "" if rows else no_tree_note(r, trace_id)
