"""Trace browser (UI-1): the traces in the open store with what each was (title), its score
where it is an eval sample, when it started, its model calls and tokens; the samples of an
Inspect eval grouped under the eval. Newest first; every column sorts; a score filter and a
filter bar (text, model, date range, cost and tokens at least; remembered in the settings)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QVBoxLayout,
    QWidget,
)

from core.cost.compute import usd_by_trace
from core.cost.table import load_table
from core.cost.totals import trace_totals
from core.inspector.trace_filter import ListFilter, models_of
from core.inspector.trace_list import EvalGroup, TraceSummary, group_evals, summaries
from core.records import Trace
from core.store import Store
from ui.panes.common import GET_A_TRACE, EmptyTextTree
from ui.panes.trace_filter_bar import TraceFilterBar
from ui.panes.trace_tree import (
    COLUMNS,
    SORTS,
    TRACE_ID_ROLE,
    TraceFilter,
    TraceTreeModel,
    TwoLineDelegate,
)
from ui.session import Session
from ui.settings import AppSettings
from ui.tasks import TaskRunner
from ui.widgets import push_button, wrapped_label

ANY_SCORE = "any score"
FILTER_KEY = "traces/filter"
LIST_KEY = "trace-list"
#: Narrow figure columns, so the title keeps most of the pane (pixels at the default font).
WIDTHS = {
    "Score": 46,
    "Start": 86,
    "Calls": 42,
    "Transcript tok": 92,
    "Recorded tok": 92,
    "Duration": 64,
    "Cost": 64,
    "Messages": 64,
}
#: Evals are shown opened when the whole list is at most this many rows.
EXPAND_ROWS = 400
EMPTY = f"No traces in this store.\n\n{GET_A_TRACE}"
"""Said in the list itself (it was only a tooltip: a new store showed an empty pane)."""


class TraceBrowser(QWidget):
    trace_chosen = Signal(str)
    compare_requested = Signal(str, str)
    """Two traces to compare (in store order: the older is A)."""

    def __init__(
        self,
        session: Session,
        settings: AppSettings | None = None,
        runner: TaskRunner | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("traceBrowser")
        self.session = session
        self.settings = settings
        self.runner = runner
        self.model = TraceTreeModel(self)
        self.proxy = TraceFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = self._tree()
        self.score_filter = QComboBox()
        self.score_filter.setObjectName("scoreFilter")
        self.score_filter.setToolTip("Show only the eval samples with this score")
        self.score_filter.currentTextChanged.connect(self._score_chosen)
        self.score_filter.setVisible(False)  # until the list has scores (``_fill_scores``)
        self.sort = QComboBox()
        self.sort.setObjectName("traceSort")
        self.sort.setToolTip("Order of the list (the header sorts by any shown column too)")
        self.sort.addItems([label for label, _, _ in SORTS])
        self.sort.currentIndexChanged.connect(self._sort_chosen)
        self.compare_button = push_button(
            "Compare…",
            "compareTraces",
            "Select two traces (Ctrl+click the second) to compare them call by call",
            self._compare,
            enabled=False,
        )
        # wraps: in the default dock it ran into the button ("…to comp", screenshot review)
        self.hint = wrapped_label("Ctrl+click a second trace to compare", "compareHint")
        buttons = QHBoxLayout()
        buttons.addWidget(self.hint, 1)
        buttons.addWidget(self.compare_button)
        self.setMinimumWidth(300)
        self.where = wrapped_label("No store open")
        self.where.setObjectName("storePath")
        top = QHBoxLayout()
        top.addWidget(self.sort, 1)
        top.addWidget(self.score_filter, 1)
        self.filters = TraceFilterBar()
        self.shown = QLabel("")
        self.shown.setObjectName("tracesShown")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.where)
        layout.addLayout(top)
        layout.addWidget(self.filters)
        layout.addWidget(self.shown)
        layout.addWidget(self.table)
        layout.addLayout(buttons)
        session.store_changed.connect(self.reload)
        session.changed.connect(self._mark_current)
        self.filters.changed.connect(self._filter_chosen)
        self.filters.set_filter(ListFilter.from_text(settings.get(FILTER_KEY) if settings else ""))

    def _tree(self) -> EmptyTextTree:
        tree = EmptyTextTree()
        tree.setObjectName("traceList")
        tree.setModel(self.proxy)
        tree.setRootIsDecorated(True)
        tree.setIndentation(12)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setSortingEnabled(True)
        tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        tree.setItemDelegateForColumn(0, TwoLineDelegate(tree))
        _, column, descending = SORTS[0]
        tree.sortByColumn(column, _order(descending))
        header = tree.header()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(28)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col, (name, _, _, shown) in enumerate(COLUMNS[1:], start=1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, WIDTHS.get(name, 80))
            tree.setColumnHidden(col, not shown)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._columns_menu)
        tree.clicked.connect(self._clicked)
        tree.activated.connect(self._clicked)
        tree.selectionModel().selectionChanged.connect(self._selection_changed)
        tree.setToolTip("Right-click the header to show more columns (model, duration, …)")
        return tree

    def _columns_menu(self, at: QPoint) -> None:
        menu = QMenu(self)
        for col, (name, *_rest) in enumerate(COLUMNS):
            if col == 0:
                continue
            act = menu.addAction(name)
            act.setCheckable(True)
            act.setChecked(not self.table.isColumnHidden(col))
            act.toggled.connect(lambda on, c=col: self.table.setColumnHidden(c, not on))
        menu.exec(self.table.header().mapToGlobal(at))

    def reload(self) -> None:
        """List the open store's traces: read on the task runner when the pane has one
        (a large store's figures take a while), then shown on the UI thread."""
        store = self.session.store
        self.where.setText(f"Store: {store.describe()}" if store else "No store open")
        if store is None or self.runner is None:
            self._show(load_rows(store) if store is not None else [])
            return
        if not self.model.records:
            self.shown.setText("Loading the traces…")
            self.shown.setVisible(True)
        self.runner.submit("Listing traces", lambda _c: load_rows(store), self._show, key=LIST_KEY)

    def _show(self, rows: list[TraceSummary | EvalGroup]) -> None:
        chosen = self.selected_ids()
        self.model.set_rows(rows)
        if len(self.model.records) <= EXPAND_ROWS:
            self.table.expandAll()
        self._fill_scores()
        self.filters.set_models(models_of(self._summaries(rows)))
        self.table.setToolTip("" if rows else EMPTY)
        self.table.empty_text = "" if rows else EMPTY
        self.table.viewport().update()
        self._count_shown()
        self._mark_current()
        if len(chosen) > 1:  # two traces picked to compare stay picked
            self.select_ids(chosen)

    @staticmethod
    def _summaries(rows: list[TraceSummary | EvalGroup]) -> list[TraceSummary]:
        return [s for r in rows for s in (r.samples if isinstance(r, EvalGroup) else (r,))]

    def _filter_chosen(self, f: ListFilter) -> None:
        self.proxy.set_rows_filter(f)
        if f.active:
            self.table.expandAll()
        if self.settings is not None:
            self.settings.set(FILTER_KEY, f.to_text())
        self._count_shown()

    def _count_shown(self) -> None:
        """ "Showing N of M traces" while a filter hides some."""
        shown, total = len(self._indexes()), len(self.model.records)
        self.shown.setText(f"Showing {shown:,} of {total:,} traces")
        self.shown.setVisible(shown != total)

    def _fill_scores(self) -> None:
        current = self.score_filter.currentText()
        self.score_filter.blockSignals(True)
        self.score_filter.clear()
        self.score_filter.addItems([ANY_SCORE, *self.model.scores])
        self.score_filter.setCurrentText(current if current in self.model.scores else ANY_SCORE)
        self.score_filter.blockSignals(False)
        self.score_filter.setVisible(bool(self.model.scores))
        self._score_chosen(self.score_filter.currentText())

    def _sort_chosen(self, choice: int) -> None:
        _, column, descending = SORTS[choice]
        self.table.sortByColumn(column, _order(descending))

    def _score_chosen(self, text: str) -> None:
        self.proxy.set_score(None if text in ("", ANY_SCORE) else text)
        if self.proxy.score is not None:
            self.table.expandAll()
        self._count_shown()

    # -- rows and selection -------------------------------------------------------------
    def _indexes(self) -> list[QModelIndex]:
        """Column-0 proxy indexes of every trace row (samples included)."""
        out: list[QModelIndex] = []
        stack = [QModelIndex()]
        while stack:
            parent = stack.pop()
            for row in range(self.proxy.rowCount(parent)):
                index = self.proxy.index(row, 0, parent)
                if index.data(TRACE_ID_ROLE):
                    out.append(index)
                stack.append(index)
        return out

    def _mark_current(self) -> None:
        for index in self._indexes():
            if index.data(TRACE_ID_ROLE) == self.session.trace_id:
                self.table.scrollTo(index)
                self.table.selectionModel().select(
                    index,
                    self.table.selectionModel().SelectionFlag.ClearAndSelect
                    | self.table.selectionModel().SelectionFlag.Rows,
                )
                return

    def record(self, trace_id: str) -> Trace | None:
        """The listed record of ``trace_id`` (``None``: not listed, or not yet)."""
        return next((t for t in self.model.records if t.id == trace_id), None)

    def selected_ids(self) -> list[str]:
        """The selected traces, in store order."""
        chosen = {
            i.data(TRACE_ID_ROLE)
            for i in self.table.selectionModel().selectedRows()
            if i.data(TRACE_ID_ROLE)
        }
        return [t.id for t in self.model.records if t.id in chosen]

    def select_ids(self, ids: list[str]) -> None:
        self.table.clearSelection()
        flags = self.table.selectionModel().SelectionFlag
        for index in self._indexes():
            if index.data(TRACE_ID_ROLE) in ids:
                self.table.selectionModel().select(index, flags.Select | flags.Rows)

    def _selection_changed(self) -> None:
        n = len(self.selected_ids())
        self.compare_button.setEnabled(n == 2)
        self.hint.setText(
            "Ctrl+click a second trace to compare" if n < 2 else
            "" if n == 2 else "Select exactly two traces to compare"
        )  # fmt: skip

    def _compare(self) -> None:
        ids = self.selected_ids()
        if len(ids) == 2:
            self.compare_requested.emit(ids[0], ids[1])

    def _clicked(self, index: QModelIndex) -> None:
        mods = QApplication.keyboardModifiers()
        if mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier):
            return  # adding to the selection (to compare), not opening
        trace_id = self.proxy.index(index.row(), 0, index.parent()).data(TRACE_ID_ROLE)
        if trace_id and trace_id != self.session.trace_id:
            self.trace_chosen.emit(trace_id)


def _order(descending: bool) -> Qt.SortOrder:
    return Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder


def load_rows(store: Store) -> list[TraceSummary | EvalGroup]:
    """The pane's rows: every trace's figures and cost (its usage sums caught up first)."""
    costs = usd_by_trace(*trace_totals(store, load_table()))
    with store.read() as r:
        return group_evals(summaries(r, costs))
