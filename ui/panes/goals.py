"""Goals pane (UI-3): the GoalTree as of the head; selecting a goal filters the timeline.

Rows come from ``core/inspector/goals.py:goal_outline``: status icon (legend under the tree),
id and title (bold for the goal in focus), a second line with the summary of a finished
goal, message and token counts on the main path. A strip under the tree shows the whole record of
the selected goal. Reloads whenever the timeline reloads (new trace, rewind, compaction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from core.inspector.goals import GoalNode, goal_outline
from core.inspector.unrecorded import panel_note
from ui.icons import status_icon
from ui.panes.common import LOADING, NO_TRACE, clickable_tree, empty_label
from ui.panes.table_model import horizontal_header
from ui.panes.tree_model import PositionTreeModel
from ui.plain import plain_label, plain_tip
from ui.session import Session
from ui.tasks import TaskRunner, reading
from ui.widgets import wrapped_label

if TYPE_CHECKING:
    from core.store.reader import Reader

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Goal", "Msgs", "Tokens")
SummaryRole = Qt.ItemDataRole.UserRole + 1
NodeRole = Qt.ItemDataRole.UserRole + 2
EMPTY_TEXT = "No goals recorded on this trace."
"""A ctxlens run that set no goal (a trace whose source records none says so instead:
``core/inspector/unrecorded.py:panel_note``)."""


def outline(reader: Reader, trace_id: str) -> tuple[list[GoalNode], str]:
    """The goal outline and, when it is empty because the trace's source records no
    goals, the sentence that says so (``""`` otherwise)."""
    nodes = goal_outline(reader, trace_id)
    return nodes, "" if nodes else panel_note(reader, trace_id, "goals")


class GoalTreeModel(PositionTreeModel):
    """Tree of goals, one record per ``GoalNode`` in ``nodes``."""

    headers = HEADERS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.nodes: list[GoalNode] = []
        self._pos: dict[str, int] = {}

    def set_nodes(self, nodes: list[GoalNode]) -> None:
        self.beginResetModel()
        self.nodes = list(nodes)
        self._pos = {n.id: i + 1 for i, n in enumerate(self.nodes)}
        self.set_parents(self._pos.get(n.parent, 0) if n.parent else 0 for n in self.nodes)
        self.endResetModel()

    def update_nodes(self, nodes: list[GoalNode]) -> bool:
        """Replace the nodes in place when the tree has the same shape (ids and parents in
        the same order): no reset, so expansion and selection stay. ``False``: it has not."""
        if [(n.id, n.parent) for n in nodes] != [(n.id, n.parent) for n in self.nodes]:
            return False
        self.layoutAboutToBeChanged.emit()
        self.nodes = list(nodes)
        self.layoutChanged.emit()  # rows may grow a summary line: lay them out again
        return True

    def node(self, index: Index) -> GoalNode | None:
        return self.nodes[index.internalId() - 1] if index.isValid() else None

    def index_of(self, goal_id: str) -> QModelIndex:
        pos = self._pos.get(goal_id)
        return QModelIndex() if pos is None else self.index_at(pos)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        n = self.node(index)
        if n is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(n, col)
        if role == Qt.ItemDataRole.DecorationRole and col == 0:
            return status_icon(n.status)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(n.detail() + "\nClick to show only its messages in the timeline.")
        if role == Qt.ItemDataRole.FontRole and n.focus:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.AccessibleTextRole and col == 0:
            focus = ", in focus" if n.focus else ""
            return f"{self._text(n, 0)}, {n.status_label}{focus}"
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 1:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == SummaryRole and col == 0:
            return n.summary
        if role == NodeRole:
            return n
        return None

    @staticmethod
    def _text(n: GoalNode, col: int) -> str:
        if col == 0:
            return f"{n.id}  {n.title}".rstrip()
        return f"{n.shown_messages:,}" if col == 1 else f"{n.shown_tokens:,}"

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.ToolTipRole and horizontal and section in (1, 2):
            return "Messages and tokens on the current path, the goal's own and its sub-goals'"
        return horizontal_header(HEADERS, section, orientation, role)


class GoalDelegate(QStyledItemDelegate):
    """Column 0 of a finished goal gets a second, dimmed line: its summary or reason.

    Rows differ in height, so the tree asks every row's size when it lays out (selecting
    a goal, expanding): one ``data`` call per row here, the style's size of a row of the
    same kind (column, icon, bold, font) computed once (a 1,100-goal trace took 200 ms
    of UI thread with the style asked per row)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._sizes: dict[tuple[int, bool, bool, int], QSize] = {}

    def _summary(self, index: Index) -> str:
        value = index.data(SummaryRole) if index.column() == 0 else None
        return str(value) if value else ""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        n = index.data(NodeRole)
        if not isinstance(n, GoalNode):
            return super().sizeHint(option, index)
        col, line = index.column(), option.fontMetrics.height()
        key = (col, bool(n.status) and col == 0, n.focus, line)
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = super().sizeHint(option, index)
        if col != 0 or not n.summary:
            return size
        return QSize(size.width(), size.height() + line)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        summary = self._summary(index)
        if not summary:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        rect: QRect = opt.rect
        line = opt.fontMetrics.height()
        # background and selection over the whole row, the item itself in the top part
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, opt, painter, widget)
        first = QStyleOptionViewItem(opt)
        first.rect = QRect(rect.x(), rect.y(), rect.width(), rect.height() - line)
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, first, painter, widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        roles = QPalette.ColorRole
        role = roles.HighlightedText if selected else roles.PlaceholderText
        painter.save()
        painter.setPen(opt.palette.color(role))
        font = QFont(opt.font)
        font.setItalic(True)
        font.setBold(False)
        painter.setFont(font)
        indent = opt.decorationSize.width() + 8
        text_rect = QRect(
            rect.x() + indent, rect.bottom() - line - 1, rect.width() - indent - 4, line
        )
        text = painter.fontMetrics().elidedText(
            summary, Qt.TextElideMode.ElideRight, text_rect.width()
        )
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignVCenter), text)
        painter.restore()


class GoalPane(QWidget):
    goal_chosen = Signal(object)
    """A goal id to filter the timeline by, or ``None`` to clear the filter."""
    loaded = Signal()

    def __init__(self, session: Session, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("goalPane")
        self.session, self.runner = session, runner
        self.model = GoalTreeModel(self)
        self.chosen: str | None = None
        self._trace: str | None = None
        """The trace whose outline is shown (another one is cleared while it loads)."""
        self._as_of: tuple[tuple[GoalNode, ...] | None, str] | None = None
        """What playback showed last (``None``: the current state)."""
        self.tree = clickable_tree(self.model, "goalTree", self._clicked)
        self.tree.setItemDelegate(GoalDelegate(self.tree))
        self.tree.setUniformRowHeights(False)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col, width in ((1, 44), (2, 56)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            self.tree.setColumnWidth(col, width)
        self.empty = empty_label(NO_TRACE)
        self.detail = plain_label(wrapped_label(name="goalDetail"))
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setStyleSheet("QLabel#goalDetail { padding: 3px; }")
        self.legend = _legend()
        self.note = QLabel("Click a goal to filter the timeline.")
        self.clear_button = QPushButton("Show all")
        self.clear_button.setToolTip("Clear the goal filter")
        self.clear_button.clicked.connect(self._clear)
        row = QHBoxLayout()
        row.addWidget(self.note, 1)
        row.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.legend)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.detail)
        layout.addLayout(row)
        self._show([], announce=False)  # until a trace is shown: "No trace open."

    def reload(self) -> None:
        self._as_of = None
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            self._trace = None
            self.empty.setText(NO_TRACE)
            self._show([])
            return
        if trace_id != self._trace:  # not the last trace's goals meanwhile
            self._trace = trace_id
            self.empty.setText(LOADING)
            self._show([], announce=False)
        self.runner.submit("goals", reading(store, outline, trace_id), self._loaded, key="goals")

    def _loaded(self, loaded: tuple[list[GoalNode], str]) -> None:
        nodes, note = loaded
        self.empty.setText(note or EMPTY_TEXT)
        self._show(nodes)

    def show_as_of(self, nodes: list[GoalNode] | None, note: str) -> None:
        """Playback: the outline as of a past call; ``None`` when the trace records no goals
        (``note`` says so instead of an empty tree)."""
        self.runner.cancel("goals")
        shown = (None if nodes is None else tuple(nodes), note)
        if shown == self._as_of:
            return  # consecutive calls often share a tree: no reset, no re-expand
        self._as_of = shown
        if nodes and self.tree.isVisible() and self.model.update_nodes(nodes):
            current = self.model.node(self.tree.currentIndex())
            self._describe(current or next((n for n in nodes if n.focus), None))
            self.loaded.emit()
            return
        self.empty.setText(note if nodes is None else EMPTY_TEXT)
        self._show(nodes or [])

    def _show(self, nodes: list[GoalNode], announce: bool = True) -> None:
        self.model.set_nodes(nodes)
        self.tree.expandAll()
        self.empty.setVisible(not nodes)
        self.tree.setVisible(bool(nodes))
        self.legend.setVisible(any(n.status for n in nodes))
        index = self.model.index_of(self.chosen) if self.chosen else QModelIndex()
        if index.isValid():
            self.tree.setCurrentIndex(index)
        self._describe(self.model.node(index) or next((n for n in nodes if n.focus), None))
        if announce:
            self.loaded.emit()

    def _describe(self, node: GoalNode | None) -> None:
        if node is None:
            self.detail.setText("")
            self.detail.setVisible(False)
            return
        self.detail.setText(node.detail())
        self.detail.setVisible(True)

    def select_goal(self, goal_id: str | None) -> None:
        """Select a goal (or clear) and filter the timeline by it."""
        index = self.model.index_of(goal_id) if goal_id else QModelIndex()
        if index.isValid():
            self.tree.setCurrentIndex(index)
            self._clicked(index)
        else:
            self._clear()

    def _clicked(self, index: QModelIndex) -> None:
        n = self.model.node(index)
        if n is not None:
            self.chosen = n.id
            self._describe(n)
            self.goal_chosen.emit(n.id)

    def _clear(self) -> None:
        self.chosen = None
        self.tree.clearSelection()
        self._describe(next((n for n in self.model.nodes if n.focus), None))
        self.goal_chosen.emit(None)


def _legend() -> QWidget:
    """The four status icons with their names, and what bold means (two short rows, so
    the pane stays narrow)."""
    box = QWidget()
    box.setObjectName("goalLegend")
    grid = QGridLayout(box)
    grid.setContentsMargins(2, 0, 2, 0)
    grid.setHorizontalSpacing(10)
    grid.setVerticalSpacing(0)
    cells = [
        ("pending", "pending"),
        ("in_progress", "in progress"),
        (None, "<b>bold</b> = focus"),
        ("completed", "completed"),
        ("abandoned", "abandoned"),
    ]
    for n, (status, text) in enumerate(cells):
        cell = QHBoxLayout()
        cell.setSpacing(3)
        if status is not None:
            icon = QLabel()
            icon.setPixmap(status_icon(status).pixmap(12, 12))
            cell.addWidget(icon)
        cell.addWidget(QLabel(text))
        cell.addStretch(1)
        grid.addLayout(cell, n // 3, n % 3)
    grid.setColumnStretch(3, 1)
    return box
