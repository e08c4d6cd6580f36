"""A read-only tree model over records kept in a list, the shape both tree panes share.

Index ids are list positions + 1 (0 is the invisible root), never Python pointers, so a
reset or a layout change cannot leave a view holding a dangling id. A subclass keeps the
records, names its columns in ``headers`` and gives the tree's shape to ``set_parents``.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex

Index = QModelIndex | QPersistentModelIndex


class PositionTreeModel(QAbstractItemModel):
    headers: tuple[str, ...] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._children: dict[int, list[int]] = {0: []}
        self._parent: dict[int, int] = {}

    def set_parents(self, parents: Iterable[int]) -> None:
        """The tree's shape: the parent position of records 1, 2, … in order (0: top level).
        Call it between ``beginResetModel`` and ``endResetModel``."""
        self._children, self._parent = {0: []}, {}
        for pos, parent in enumerate(parents, start=1):
            self._parent[pos] = parent
            self._children.setdefault(parent, []).append(pos)
            self._children.setdefault(pos, [])

    def index_at(self, pos: int) -> QModelIndex:
        """The column-0 index of the record at position ``pos``."""
        siblings = self._children[self._parent[pos]]
        return self.createIndex(siblings.index(pos), 0, pos)

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        kids = self._children.get(parent.internalId() if parent.isValid() else 0, [])
        if not (0 <= row < len(kids) and 0 <= column < len(self.headers)):
            return QModelIndex()
        return self.createIndex(row, column, kids[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        pos = self._parent.get(index.internalId(), 0) if index.isValid() else 0
        return self.index_at(pos) if pos else QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._children.get(parent.internalId() if parent.isValid() else 0, []))

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(self.headers)
