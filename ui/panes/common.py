"""Small shared widgets: a table view with an empty-state message, a clickable tree view
and the empty-state label of the tree panes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableView,
    QTreeView,
    QWidget,
)

from ui.widgets import wrapped_label

LOADING = "Loading…"
"""What a pane's empty state says while its first rows for a trace are on their way."""


class RecordTable(QTableView):
    """A compact, row-selecting table that says so when it has nothing to show."""

    def __init__(
        self, model: QAbstractItemModel, empty_text: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.empty_text = empty_text
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.horizontalHeader().setStretchLastSection(True)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        model = self.model()
        if model is not None and model.rowCount() == 0 and self.empty_text:
            p = QPainter(self.viewport())
            p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            rect = self.viewport().rect().adjusted(12, 12, -12, -12)
            flags = (
                Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
            )
            p.drawText(rect, int(flags), self.empty_text)
            p.end()


def clickable_tree(
    model: QAbstractItemModel, name: str, on_click: Callable[[QModelIndex], None]
) -> QTreeView:
    """A tree view over ``model`` with alternating rows; a click or Enter on a row calls
    ``on_click`` with its index."""
    tree = QTreeView()
    tree.setObjectName(name)
    tree.setModel(model)
    tree.setAlternatingRowColors(True)
    tree.clicked.connect(on_click)
    tree.activated.connect(on_click)
    return tree


def empty_label(text: str) -> QLabel:
    """The wrapped, top-left note a pane shows instead of an empty tree."""
    label = wrapped_label(text)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    return label
