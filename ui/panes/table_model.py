"""A read-only table model over a list of records, one getter per column."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from ui.plain import plain_tip

T = TypeVar("T")
RecordRole = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex


READ_ONLY = (
    Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
)


def read_only_flags(index: Index) -> Qt.ItemFlag:
    """A cell that can be selected, not edited, and has no children (every model here)."""
    return READ_ONLY if index.isValid() else Qt.ItemFlag.NoItemFlags


def horizontal_header(
    headers: Sequence[str], section: int, orientation: Qt.Orientation, role: int
) -> str | None:
    """``headerData`` of a table whose columns are named by ``headers``."""
    horizontal = orientation == Qt.Orientation.Horizontal
    if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(headers):
        return headers[section]
    return None


class Column(Generic[T]):
    def __init__(
        self, header: str, get: Callable[[T], Any], tooltip: Callable[[T], str] | None = None,
        align_right: bool = False, color: Callable[[T], str | None] | None = None,
    ) -> None:  # fmt: skip
        self.header = header
        self.get = get
        self.tooltip = tooltip
        self.align_right = align_right
        self.color = color
        """Text colour of a cell (``#rrggbb``), or ``None`` for the palette's."""


class RecordTableModel(QAbstractTableModel, Generic[T]):
    def __init__(
        self,
        columns: Sequence[Column[T]],
        parent: QObject | None = None,
        dim: Callable[[T], bool] | None = None,
    ) -> None:
        """``dim``: records shown apart from the others (the placeholder colour, italic)."""
        super().__init__(parent)
        self.columns = list(columns)
        self.records: list[T] = []
        self.empty_text = ""
        self.dim = dim

    def set_records(self, records: Sequence[T]) -> None:
        self.beginResetModel()
        self.records = list(records)
        self.endResetModel()

    def record(self, row: int) -> T | None:
        return self.records[row] if 0 <= row < len(self.records) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.records):
            return None
        if not 0 <= index.column() < len(self.columns):
            return None
        rec = self.records[index.row()]
        col = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = col.get(rec)
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ToolTipRole and col.tooltip is not None:
            return plain_tip(col.tooltip(rec))
        if role == Qt.ItemDataRole.ForegroundRole and col.color is not None:
            color = col.color(rec)
            if color:
                return QColor(color)
        dim = self.dim is not None and self.dim(rec)
        if role == Qt.ItemDataRole.ForegroundRole and dim:
            return QApplication.palette().color(QPalette.ColorRole.PlaceholderText)
        if role == Qt.ItemDataRole.FontRole and dim:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == RecordRole:
            return rec
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return horizontal_header([c.header for c in self.columns], section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)
