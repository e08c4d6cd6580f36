"""The hits of a cross-trace search as a table: trace, when, where, what (read-only)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from core.inspector.recorded_time import shown
from core.search.engine import Hit

COLUMNS = ("Trace", "When", "Message", "Text")
Index = QModelIndex | QPersistentModelIndex


class HitsModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.hits: tuple[Hit, ...] = ()

    def set_hits(self, hits: tuple[Hit, ...]) -> None:
        self.beginResetModel()
        self.hits = hits
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.hits)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.hits):
            return None
        hit = self.hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(hit, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{hit.title}\n{hit.trace_id} · {hit.source}"
        return None

    @staticmethod
    def _text(hit: Hit, column: int) -> str:
        if column == 0:
            return hit.title or hit.trace_id
        if column == 1:
            if not hit.created_recorded:  # the trace's fill, not the message's time
                return "not recorded"
            return shown(hit.created_at, hit.time_basis, "%Y-%m-%d %H:%M")
        if column == 2:
            return "whole trace" if hit.sequence is None else f"#{hit.sequence} {hit.role}"
        return hit.snippet
