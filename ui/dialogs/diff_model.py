"""The compact dialog's side-by-side table: the context before and after, row by row.

Rows come from ``core/inspector/compaction.py:diff_rows``. Removed rows are struck out and
dimmed; replaced rows show the placeholder on the right in italics; added rows (a summary,
an identity block, restored files) are tinted green. The tints are translucent, so they
read in the light and the dark palette alike.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from core.inspector.compaction import DiffCell, DiffRow
from ui.panes.table_model import horizontal_header, read_only_flags
from ui.plain import plain_tip

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("#", "Before", "Tok", "", "#", "After", "Tok")
LEFT, MIDDLE = range(3), 3
STATUS_MARK = {"kept": "", "removed": "−", "replaced": "~", "added": "+"}
TINTS = {
    "removed": QColor(210, 70, 70, 46),
    "replaced": QColor(217, 165, 32, 60),
    "added": QColor(46, 157, 98, 60),
}
STATUS_TIPS = {
    "kept": "kept as it was",
    "removed": "leaves the context (the store keeps it)",
    "replaced": "stays, shown with other content (a placeholder or a marker)",
    "added": "new in the context",
}
RowRole = Qt.ItemDataRole.UserRole + 1


class DiffModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[DiffRow] = []

    def set_rows(self, rows: list[DiffRow]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def _cell(self, row: DiffRow, col: int) -> DiffCell | None:
        return row.before if col in LEFT else row.after

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, col = self.rows[index.row()], index.column()
        if role == RowRole:
            return row
        if col == MIDDLE:
            return self._middle(row, role)
        cell = self._cell(row, col)
        left = col in LEFT
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._tint(row, left)
        if cell is None:
            return None
        kind = col if left else col - 4
        if role == Qt.ItemDataRole.DisplayRole:
            return _text(cell, kind)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(f"{cell.role} · {cell.kind} · {cell.tokens:,} tokens\n{cell.text}")
        if role == Qt.ItemDataRole.FontRole:
            return self._font(row, left)
        if role == Qt.ItemDataRole.ForegroundRole and left and row.status == "removed":
            return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.TextAlignmentRole and kind in (0, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    @staticmethod
    def _middle(row: DiffRow, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return STATUS_MARK[row.status]
        if role == Qt.ItemDataRole.ToolTipRole:
            return STATUS_TIPS[row.status]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.BackgroundRole:
            return TINTS.get(row.status)
        return None

    @staticmethod
    def _tint(row: DiffRow, left: bool) -> QColor | None:
        if row.status == "removed":
            return TINTS["removed"] if left else None
        if row.status == "added":
            return TINTS["added"] if not left else None
        if row.status == "replaced":
            return TINTS["replaced"]
        return None

    @staticmethod
    def _font(row: DiffRow, left: bool) -> QFont | None:
        if row.status == "removed" and left:
            font = QFont()
            font.setStrikeOut(True)
            return font
        if row.status in ("replaced", "added") and not left:
            font = QFont()
            font.setItalic(row.status == "replaced")
            return font
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return horizontal_header(HEADERS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)


def _text(cell: DiffCell, kind: int) -> str:
    if kind == 0:
        return "" if cell.sequence is None else f"#{cell.sequence}"
    if kind == 2:
        return f"{cell.tokens:,}"
    return f"{cell.role[:1].upper()}  {cell.text}"
