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
NO_TRACE = "No trace open."
"""What a pane says when no trace is open (not "… in this trace": there is none)."""
GET_A_TRACE = (
    "Import trace files: File → Import traces… (Ctrl+I), File → Import folder… "
    "(Ctrl+Shift+I), or drop them onto the window.\n"
    "Record one: Run → New demo run… (Ctrl+Shift+N).\n"
    "Open another store: File → Open store… (Ctrl+O)."
)
"""The actions that bring a trace in, with their menus and shortcuts
(``ui/window_actions.py:ACTIONS``; a test keeps the two equal)."""
NO_TRACE_HELP = f"{NO_TRACE}\n\n{GET_A_TRACE}"
"""The timeline's empty state: a store without traces (``gui --db NEW.db``) says what to do."""


def paint_empty(view: QAbstractItemView, text: str) -> None:
    """Draw ``text`` in the placeholder colour at the top of ``view``'s empty viewport (call
    from its ``paintEvent``, after the view's own painting)."""
    model = view.model()
    if model is None or model.rowCount() or not text:
        return
    p = QPainter(view.viewport())
    p.setPen(view.palette().color(QPalette.ColorRole.PlaceholderText))
    rect = view.viewport().rect().adjusted(12, 12, -12, -12)
    flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
    p.drawText(rect, int(flags), text)
    p.end()


class EmptyTextTree(QTreeView):
    """A tree view that says ``empty_text`` when its model has no rows."""

    empty_text = ""

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        paint_empty(self, self.empty_text)


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
        paint_empty(self, self.empty_text)


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
