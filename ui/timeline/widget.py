"""The timeline pane: search and filters over a virtualized list of the trace's path.

Loading the path (segments, bands, branches), computing which rows are in the current
context, and searching all run on the task runner; the list only ever asks the model for
the rows it paints. The search's query parser loads with the first search, not before the
rows; at start-up the first rows may come from ``core/store/first_page.py`` (``sqlite3``
alone, ``show_first``) before the ``Store`` opens, and the context membership after it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QPaintEvent, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.inspector.bands import Band, bands
from core.inspector.branches import Branch, branch_label, branches, fork_badges
from core.inspector.timeline import TimelineRow
from core.records import MESSAGE_KINDS, ROLES
from core.store.first_page import NeedsStore, PathStore, QuickStore
from core.store.paths import Segment
from ui.elided import ElidedLabel
from ui.panes.common import NO_TRACE_HELP, paint_empty
from ui.session import Session
from ui.tasks import TaskRunner, reading
from ui.timeline.delegate import ROW_HEIGHT, TimelineDelegate
from ui.timeline.model import PAGE_SIZE, Loading, TimelineModel, fetch_page
from ui.widgets import wrapped_label

if TYPE_CHECKING:  # these load the store's reader (SQLAlchemy): after the first rows
    from core.inspector.membership import ContextMembership
    from core.inspector.query import SearchResult  # loaded by the first search
    from core.store import Store
    from core.store.reader import Reader


@dataclass(frozen=True)
class PathSource:
    trace_id: str
    head: int | None
    segments: list[Segment]
    bands: list[Band]
    detached: list[Band]
    branches: list[Branch]
    last_page: tuple[int, list[TimelineRow]] | None = None
    """The page of the path's last row (the view opens there), read with the path."""


def load_path(store: PathStore, trace_id: str, head: int | None) -> PathSource:
    with store.read() as r:
        segs = r.segments(trace_id, head)
        placed, detached = bands(r, trace_id, segs)
        main = segs if head is None else r.segments(trace_id)
        found = branches(r, trace_id, main)  # always relative to the real main path
    length = sum(len(s) for s in segs)
    last = None
    if length:
        page_no = (length - 1) // PAGE_SIZE
        last = (page_no, fetch_page(store, trace_id, segs, fork_badges(found), page_no))
    return PathSource(trace_id, head, segs, placed, detached, found, last)


def load_first(store: QuickStore, trace_id: str | None) -> PathSource | None:
    """The main path of the trace a start opens (``trace_id``, else the newest), read with
    ``sqlite3`` alone; ``None`` when the ``Store`` must read it (no such trace, a pending
    token count, a file that changed meanwhile): the caller opens it."""
    try:
        with store.read() as r:
            chosen = r.chosen_trace(trace_id)
        return None if chosen is None else load_path(store, chosen[0], None)
    except (NeedsStore, sqlite3.Error):
        return None


def path_row_of(r: Reader, trace_id: str, sequence: int, segments: list[Segment]) -> int | None:
    """Where message ``sequence`` is on the path of ``segments`` (``None``: not on it)."""
    return r.path_rows(trace_id, [sequence], segments).get(sequence)


class TimelineWidget(QWidget):
    message_selected = Signal(int)
    band_selected = Signal(object)
    loaded = Signal()
    main_path_loaded = Signal()
    """The trace's main path (not a branch view) was loaded: other panes may load now."""
    searched = Signal(object)
    grown = Signal()
    """Rows were inserted at the end of the shown path (a live trace grew)."""

    def __init__(self, session: Session, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.session = session
        self.runner = runner
        self.pages = TaskRunner(self, threads=1)
        """Row pages load here, never queued behind the panes' long reports."""
        self.model = TimelineModel(self, runner=self.pages)
        self.model.rows_loaded.connect(self._rows_loaded)
        self.source: PathSource | None = None
        self.result: SearchResult | None = None
        self._hit_cursor = -1
        self._pending_select: int | None = None
        self._awaiting = False
        """The selected row's page is loading: announce the row when it arrives."""
        self.first_trace: str | None = None
        """The trace ``show_first`` shows, read without the ``Store`` (until it opens)."""
        self.panes_at_handover = True
        """When the ``Store`` takes over from ``show_first``'s reader and the path is the
        same, tell the panes (``main_path_loaded``) only if they saw the path without a
        store (built before it opened); panes built after it hear it from their catch-up."""
        self._build()
        session.changed.connect(self.reload)

    # -- layout ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.search_box = QLineEdit(
            placeholderText="Search text, or role:tool tool:grep goal:1.2 kind:summary"
        )
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(self.run_search)
        self.role_filter = _combo("any role", ROLES)
        self.kind_filter = _combo("any kind", MESSAGE_KINDS)
        for combo in (self.role_filter, self.kind_filter):
            combo.currentIndexChanged.connect(self.run_search)
        self.only_matches = QCheckBox("Only matches")
        self.only_matches.toggled.connect(self._apply_filter)
        self.prev_button = QPushButton("◀")
        self.next_button = QPushButton("▶")
        self.prev_button.setToolTip("Previous match (Shift+F3)")
        self.next_button.setToolTip("Next match (F3)")
        self.prev_button.clicked.connect(lambda: self.step_match(-1))
        self.next_button.clicked.connect(lambda: self.step_match(1))
        self.match_label = ElidedLabel("", minimum=60)
        for button in (self.prev_button, self.next_button):
            button.setFixedWidth(26)
        for combo in (self.role_filter, self.kind_filter):  # narrow; the list opens wide
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            combo.setMinimumContentsLength(5)
        self.search_box.setMinimumWidth(110)  # the row fits the timeline at 1280×720
        bar = QHBoxLayout()
        for w in (self.search_box, self.role_filter, self.kind_filter, self.only_matches,
                  self.prev_button, self.next_button, self.match_label):  # fmt: skip
            bar.addWidget(w)
        bar.setStretch(0, 1)

        self.branch_box = QComboBox()
        self.branch_box.setObjectName("branchBox")
        self.branch_box.activated.connect(self._branch_chosen)
        self.branch_box.setVisible(False)
        self.banner = wrapped_label(name="branchBanner")
        self.banner.setVisible(False)
        self.banner.linkActivated.connect(lambda _link: self.view_head(None))
        self.banner.setStyleSheet(
            "QLabel#branchBanner { background: #b0554a; color: white; padding: 4px; }"
        )

        # A table, not a list: QListView lays out every row on a reset (a million index()
        # calls), while a table's fixed-size header is O(1) however many rows there are.
        self.view = TimelineTable()
        self.view.setObjectName("timelineView")
        self.view.setModel(self.model)
        self.view.setItemDelegate(TimelineDelegate(self.view))
        self.view.setShowGrid(False)
        self.view.setWordWrap(False)
        self.view.horizontalHeader().setVisible(False)
        self.view.horizontalHeader().setStretchLastSection(True)
        rows = self.view.verticalHeader()
        rows.setVisible(False)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(ROW_HEIGHT)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setMouseTracking(True)
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self._tail = False
        """Following a live trace's tail: stay at the bottom as the scroll range grows."""
        self._select_last = False
        """The last row was selected when the trace grew: select the new last row."""
        self._after_growth = QTimer(self)
        self._after_growth.setSingleShot(True)
        self._after_growth.setInterval(150)
        self._after_growth.timeout.connect(self._settle_growth)
        self._panes_after_growth = QTimer(self)
        self._panes_after_growth.setSingleShot(True)
        self._panes_after_growth.setInterval(1000)
        self._panes_after_growth.timeout.connect(self._refresh_panes)
        scroll = self.view.verticalScrollBar()
        scroll.rangeChanged.connect(self._range_changed)
        scroll.valueChanged.connect(self._scrolled)

        self.status = ElidedLabel("No trace")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(160)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_search)
        foot = QHBoxLayout()
        foot.addWidget(self.status, 1)
        foot.addWidget(self.progress)
        foot.addWidget(self.cancel_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.branch_box)
        layout.addWidget(self.banner)
        layout.addWidget(self.view, 1)
        layout.addLayout(foot)
        self._layout = layout

    def add_strip(self, widget: QWidget) -> None:
        """A strip under the list, above the status line (the playback scrubber)."""
        self._layout.insertWidget(self._layout.count() - 1, widget)

    # -- loading --------------------------------------------------------------------------
    def reload(self) -> None:
        """The session changed. The same trace's main path (a run wrote, a compaction was
        recorded) is refreshed in place: rows are inserted, so the selection and the scroll
        stay; anything else (another trace, a rewind, a branch shown) loads afresh."""
        store, src = self.session.store, self.source
        same = src is not None and src.head is None and src.trace_id == self.session.trace_id
        if store is None or src is None or not same:
            self.view_head(None)
            return
        self._load_main_path(store, src.trace_id, "refresh timeline", self._refreshed, "timeline")

    def _load_main_path(
        self,
        store: Store,
        trace_id: str,
        label: str,
        done: Callable[[PathSource], None],
        key: str,
        priority: int = 0,
    ) -> None:
        """The trace's main path loaded off the UI thread, handed to ``done``."""
        load = lambda _c: load_path(store, trace_id, None)  # noqa: E731
        self.runner.submit(label, load, done, key=key, priority=priority)

    def _refreshed(self, src: PathSource) -> None:
        if self.source is None or src.trace_id != self.session.trace_id:
            return
        store = self.session.store
        handover = store is not None and self.model.store is not store
        if handover and store is not None:
            self.model.use_store(store)  # the first rows' sqlite3 reader hands over
        rows = self.model.rowCount()
        follow = self.view.currentIndex().row() == rows - 1
        if not self.model.grow(src.segments, src.bands, fork_badges(src.branches)):
            self._path_loaded(src)
            return
        self.source = src
        self._seed(src)
        self._fill_branches(src)
        self._update_status()
        seq, self._pending_select = self._pending_select, None
        if seq is not None and seq != self.selected_sequence():  # asked for another one
            self.select_sequence(seq)
        elif follow and self.model.length:  # the head was selected: follow it
            last = self.model.view_row_of(self.model.length - 1)
            self.select_view_row(last if last is not None else 0)
        else:  # the message pane was cleared: show it the same message again
            self._announce(self.view.currentIndex(), bands=False)
        quiet = handover and rows == self.model.rowCount() and not self.panes_at_handover
        self.panes_at_handover = True  # once: a store opened later (F5) tells them again
        if quiet:
            self._load_membership()  # the panes are told by their catch-up, once
        else:
            self._refresh_panes()
        self.loaded.emit()

    def show_first(
        self, store: QuickStore, trace_id: str | None, failed: Callable[[], None]
    ) -> None:
        """At start-up, before the ``Store`` opens: the main path of the trace it would
        select (``trace_id``, else the newest) read with ``sqlite3`` alone, shown like
        ``view_head(None)`` but without the context membership (it needs the ``Store``;
        the ``Store``'s ``changed`` refreshes the path in place and loads it). ``failed``
        runs when the first page cannot be read this way."""
        self.status.setText("Loading…")

        def done(src: PathSource | None) -> None:
            if self.session.store is not None or self.source is not None:
                return  # a store was opened meanwhile: it shows its own trace
            if src is None:
                failed()
                return
            self._first_loaded(store, src)

        self.runner.submit("load timeline", lambda _c: load_first(store, trace_id), done,
                           on_error=lambda _exc: failed(), key="timeline")  # fmt: skip

    def _first_loaded(self, store: QuickStore, src: PathSource) -> None:
        self.first_trace = src.trace_id
        self.source = src
        self.model.set_source(
            store, src.trace_id, None, src.segments, src.bands, fork_badges(src.branches)
        )
        self._seed(src)
        self._fill_branches(src)
        self._update_status()
        if self.model.length:
            last = self.model.view_row_of(self.model.length - 1)
            self.select_view_row(last if last is not None else 0)
        self.loaded.emit()

    def view_head(self, head: int | None) -> None:
        """Show the path to ``head`` (``None``: the trace's main path)."""
        store, trace_id = self.session.store, self.session.trace_id
        self.runner.cancel("timeline")
        self.runner.cancel("membership")
        self.runner.cancel("search")
        if store is None or trace_id is None:
            self.source = None
            self.model.clear()
            self.status.setText("No trace")
            self._no_trace(True)
            return
        self._no_trace(False)
        self.status.setText("Loading…")
        self.runner.submit(
            "load timeline",
            lambda _c: load_path(store, trace_id, head),
            self._path_loaded,
            key="timeline",
        )

    def _no_trace(self, none: bool) -> None:
        """The list's empty state: how to bring a trace in when there is none."""
        text = NO_TRACE_HELP if none else ""
        if self.view.empty_text != text:
            self.view.empty_text = text
            self.view.viewport().update()

    def follow_live(self) -> None:
        """The open trace grew (a live source wrote): load the path off the UI thread and
        insert the new rows. The view follows the tail when it was at the bottom or the
        last row was selected (then the new last row is); otherwise nothing moves."""
        store, src = self.session.store, self.source
        if store is None or src is None or src.head is not None:
            return
        # ahead of the panes' reloads queued by the previous growth
        self._load_main_path(store, src.trace_id, "follow live trace", self._grown,
                             "timeline-live", priority=1)  # fmt: skip

    def _grown(self, src: PathSource) -> None:
        if self.source is None or src.trace_id != self.source.trace_id or self.source.head:
            return
        bar = self.view.verticalScrollBar()
        last = self.view.currentIndex().row() == self.model.rowCount() - 1
        self._select_last = self._select_last or last
        at_bottom = self._select_last or bar.value() >= bar.maximum() - ROW_HEIGHT // 2
        if not self.model.grow(src.segments, src.bands, fork_badges(src.branches)):
            self._select_last = False
            self.keep_selection()
            self._path_loaded(src)
            return
        self.source = src
        self._seed(src)
        self._update_status()
        self._tail = at_bottom
        if at_bottom:
            self.view.scrollToBottom()
        self.grown.emit()
        if not self._after_growth.isActive():
            self._after_growth.start()

    def _settle_growth(self) -> None:
        """What may wait for a burst of growth to pass (one refresh, not one per batch):
        the new last row selected (the detail pane renders it); at most once a second, the
        in-context shading and the panes that follow the main path (the context pane
        shows the newest call)."""
        if self._select_last:
            self.select_view_row(self.model.rowCount() - 1)
        self._select_last = False
        if not self._panes_after_growth.isActive():
            self._panes_after_growth.start()

    def _refresh_panes(self) -> None:
        if self._load_membership():
            self.main_path_loaded.emit()

    def _load_membership(self) -> bool:
        """The main path's context shading, off the UI thread (``False``: no path)."""
        from core.inspector.membership import context_membership

        store, src = self.session.store, self.source
        if store is None or src is None:
            return False
        self.runner.submit(
            "context membership",
            reading(store, context_membership, src.trace_id, None),
            self._membership_loaded,
            key="membership",
        )
        return True

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._after_growth.stop()
        self._panes_after_growth.stop()

    def _range_changed(self, _low: int, high: int) -> None:
        if self._tail:
            self.view.verticalScrollBar().setValue(high)

    def _scrolled(self, value: int) -> None:
        if value < self.view.verticalScrollBar().maximum() - ROW_HEIGHT // 2:
            self._tail = False  # the user scrolled up: stay put from now on

    def keep_selection(self) -> None:
        """Make the next reload keep the selected message — unless it is the last row:
        then the new last row is selected, so the view follows a growing trace's head."""
        seq, src = self.selected_sequence(), self.source
        if seq is None or src is None or src.head is not None or not self.model.length:
            return
        last = self.model.path_row(self.model.length - 1)
        if last is not None and last.sequence != seq:
            self._pending_select = seq

    def select_after_reload(self, sequence: int) -> None:
        """Select ``sequence`` when the next reload has loaded the path (opening a trace at
        a message: the reload would otherwise select the head)."""
        self._pending_select = sequence

    def _path_loaded(self, src: PathSource) -> None:
        from core.inspector.membership import context_membership

        store = self.session.store
        if store is None or src.trace_id != self.session.trace_id:
            return
        if self.source is not None and self.source.trace_id != src.trace_id:
            self._reset_search()  # a query, its filter and count belong to one trace
        self.source = src
        self.result = None
        self.model.set_source(
            store, src.trace_id, src.head, src.segments, src.bands, fork_badges(src.branches)
        )
        self._seed(src)
        self._fill_branches(src)
        self._update_status()
        self.runner.submit(
            "context membership",
            reading(store, context_membership, src.trace_id, src.head),
            self._membership_loaded,
            key="membership",
        )
        if self._pending_select is not None:
            seq, self._pending_select = self._pending_select, None
            self.select_sequence(seq)
        elif self.model.length:
            last = self.model.view_row_of(self.model.length - 1)
            self.select_view_row(last if last is not None else 0)
        self.loaded.emit()
        if src.head is None:
            self.main_path_loaded.emit()

    def _seed(self, src: PathSource) -> None:
        """Hand the model the last page read with the path (no second read for it)."""
        if src.last_page is not None and self.model.page_size == PAGE_SIZE:
            self.model.seed(*src.last_page)

    def _membership_loaded(self, member: ContextMembership) -> None:
        self.model.set_membership(member)
        self._update_status()

    def _update_status(self) -> None:
        src = self.source
        if src is None:
            return
        n_rows, n_bands = self.model.length, len(src.bands)
        text = (
            f"{n_rows:,} message{'s' if n_rows != 1 else ''} on this path · "
            f"{n_bands} compaction band{'s' if n_bands != 1 else ''}"
        )
        if self.model.membership is not None:
            text += " · " + self.model.membership.status_text(self.model.length)
        if src.detached:
            n = len(src.detached)
            text += f" · {n} later compaction{'s' if n != 1 else ''} not on this path (rewound)"
        self.status.setText(text)

    # -- branches -------------------------------------------------------------------------
    def _fill_branches(self, src: PathSource) -> None:
        self.branch_box.clear()
        self.branch_box.addItem("Main path", None)
        for b in src.branches:
            self.branch_box.addItem(b.label, b.tip_sequence)
        if src.head is not None:
            i = self.branch_box.findData(src.head)
            self.branch_box.setCurrentIndex(max(0, i))
            kind = next((b.kind for b in src.branches if b.tip_sequence == src.head), "other")
            self.banner.setText(
                f"Viewing the {branch_label(kind)} branch ending at #{src.head} (read-only; "
                "the main path is unchanged). "
                "<a href='main' style='color: white'>Back to main path</a>"
            )
        self.banner.setVisible(src.head is not None)

    def set_branches_visible(self, visible: bool) -> None:
        self.branch_box.setVisible(visible)

    def _branch_chosen(self, index: int) -> None:
        self.view_head(self.branch_box.itemData(index))

    # -- selection ------------------------------------------------------------------------
    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._select_last = False  # the user chose a row (or the last one was selected)
        self._announce(current)

    def _announce(self, current: QModelIndex, bands: bool = True) -> None:
        """Tell the panes which record is selected (once its page has arrived)."""
        record = self.model.loaded_record(current.row()) if current.isValid() else None
        self._awaiting = isinstance(record, Loading)
        if isinstance(record, TimelineRow):
            self.message_selected.emit(record.sequence)
        elif isinstance(record, Band) and bands:
            self.band_selected.emit(record)

    def _rows_loaded(self, first: int, last: int) -> None:
        current = self.view.currentIndex()
        if self._awaiting and current.isValid() and first <= current.row() <= last:
            self._announce(current)

    @property
    def loading(self) -> bool:
        """Row pages (or a message looked up to be selected) are still on their way
        (screenshots and tests wait for them)."""
        return self.model.loading or self.pages.busy

    def shutdown(self) -> None:
        self.pages.shutdown()

    def selected_record(self) -> TimelineRow | Band | None:
        index = self.view.currentIndex()
        return self.model.row_record(index.row()) if index.isValid() else None

    def selected_sequence(self) -> int | None:
        record = self.selected_record()
        return record.sequence if isinstance(record, TimelineRow) else None

    def select_view_row(self, view_row: int) -> None:
        index = self.model.index(view_row)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
        self.view.selectionModel().setCurrentIndex(index, flags)
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def scroll_to_current(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.scroll_to_current()

    def select_sequence(self, sequence: int) -> bool:
        """Select a message if it is on the shown path; returns whether it was."""
        store, src = self.session.store, self.source
        if store is None or src is None:
            self._pending_select = sequence
            return False
        path_row = self.model.cached_path_row(sequence)
        if path_row is None:  # not on a page in memory: one indexed lookup
            with store.read() as r:
                path_row = r.path_rows(src.trace_id, [sequence], src.segments).get(sequence)
        return self._select_path_row(path_row)

    def find_and_select(self, sequence: int, missing: Callable[[], object]) -> None:
        """Select a message as ``select_sequence`` does, but look one that is not on a page
        in memory up off the UI thread (on the row pages' runner: a click must neither read
        here nor wait behind a long report); call ``missing`` when it is not on the shown
        path."""
        store, src = self.session.store, self.source
        if store is None or src is None or self.model.cached_path_row(sequence) is not None:
            if not self.select_sequence(sequence):
                missing()
            return

        def found(path_row: int | None) -> None:
            if self.source is src and not self._select_path_row(path_row):
                missing()

        self.pages.submit(  # with the row pages: never queued behind the panes' reports
            "find message",
            reading(store, path_row_of, src.trace_id, sequence, src.segments),
            found,
            key="find-message",
            priority=1,
        )

    def _select_path_row(self, path_row: int | None) -> bool:
        if path_row is None:
            return False
        view_row = self.model.view_row_of(path_row)
        if view_row is None:
            self.only_matches.setChecked(False)
            view_row = self.model.view_row_of(path_row)
        if view_row is not None:
            self.select_view_row(view_row)
        return view_row is not None

    # -- search ---------------------------------------------------------------------------
    def run_search(self) -> None:
        from core.inspector.query import parse_query, run_search  # on the first search

        store, src = self.session.store, self.source
        query = parse_query(
            self.search_box.text(),
            role=self.role_filter.currentData(),
            kind=self.kind_filter.currentData(),
        )
        if store is None or src is None or query.empty:
            self._clear_search()
            return
        self._busy(True)
        self.runner.submit(
            "search",
            reading(store, run_search, src.trace_id, query, src.segments),
            self._search_done,
            on_error=self._search_failed,
            key="search",
        )

    def filter_goal(self, goal_id: str | None) -> None:
        """UI-3: selecting a goal filters the timeline to that goal (and its subgoals)."""
        text = self.search_box.text()
        words = [w for w in text.split() if not w.startswith("goal:")]
        if goal_id:
            words.append(f"goal:{goal_id}")
        self.search_box.setText(" ".join(words))
        self.only_matches.setChecked(bool(goal_id))
        self.run_search()

    def _search_done(self, result: SearchResult) -> None:
        self._busy(False)
        self.result = result
        self.model.set_matches(frozenset(h.sequence for h in result.hits))
        self._apply_filter()
        on_path = len(result.on_path)
        more = "+" if result.truncated else ""
        self.match_label.setText(f"{on_path}{more} on path / {len(result.hits)}{more} total")
        self._hit_cursor = -1
        if on_path:
            self.step_match(1)
        self.searched.emit(result)

    def _search_failed(self, exc: BaseException) -> None:
        self._busy(False)
        self.match_label.setText("search failed")
        self.runner.error.emit(exc)

    def cancel_search(self) -> None:
        self.runner.cancel("search")
        self._busy(False)
        self.match_label.setText("cancelled")

    def _clear_search(self) -> None:
        self.runner.cancel("search")
        self._busy(False)
        self.result = None
        self.model.set_matches(frozenset())
        self.model.set_filter(None)
        self.match_label.setText("")

    def _reset_search(self) -> None:
        """Empty the search box, role and kind filters and "Only matches" (no re-search)."""
        widgets = (self.search_box, self.role_filter, self.kind_filter, self.only_matches)
        blockers = [QSignalBlocker(w) for w in widgets]
        self.search_box.clear()
        self.role_filter.setCurrentIndex(0)
        self.kind_filter.setCurrentIndex(0)
        self.only_matches.setChecked(False)
        del blockers
        self._clear_search()

    def _apply_filter(self) -> None:
        """Filter to the hits (or not), keeping the selected message when it stays shown:
        its path row is known from the view, so nothing is read from the store."""
        current = self.view.currentIndex()
        what, keep = self.model.locate(current.row()) if current.isValid() else ("", -1)
        if self.only_matches.isChecked() and self.result is not None:
            self.model.set_filter([h.row for h in self.result.on_path if h.row is not None])
        else:
            self.model.set_filter(None)
        view_row = self.model.view_row_of(keep) if what == "row" else None
        if view_row is not None:
            self.select_view_row(view_row)

    def step_match(self, delta: int) -> None:
        if self.result is None or not self.result.on_path:
            return
        hits = self.result.on_path
        self._hit_cursor = (self._hit_cursor + delta) % len(hits)
        row = hits[self._hit_cursor].row
        view_row = self.model.view_row_of(row) if row is not None else None
        if view_row is not None:
            self.select_view_row(view_row)

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)


class TimelineTable(QTableView):
    """Home and End go to the first and last row (a table's default moves between
    columns, and the timeline has one); Page Up/Page Down keep the table's paging. The
    selected row stays on screen when the list gets shorter (the panes built after the
    rows add the scrubber under it and size the docks around it). Without a trace it says
    how to get one (``empty_text``)."""

    empty_text = ""

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        paint_empty(self, self.empty_text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)  # the viewport has its new size already
        current = self.currentIndex()
        shrunk = event.size().height() - event.oldSize().height()
        if not current.isValid() or event.oldSize().height() < 0 or shrunk >= 0:
            return
        rect = self.visualRect(current)
        was_shown = rect.top() >= 0 and rect.bottom() <= self.viewport().height() - shrunk
        if was_shown and rect.bottom() > self.viewport().height():
            self.scrollTo(current, QAbstractItemView.ScrollHint.EnsureVisible)

    def moveCursor(
        self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier
    ) -> QModelIndex:
        model = self.model()
        rows = model.rowCount() if model is not None else 0
        if rows and action == QAbstractItemView.CursorAction.MoveHome:
            return model.index(0, 0)
        if rows and action == QAbstractItemView.CursorAction.MoveEnd:
            return model.index(rows - 1, 0)
        return super().moveCursor(action, modifiers)


def _combo(any_label: str, values: tuple[str, ...]) -> QComboBox:
    box = QComboBox()
    box.addItem(any_label, None)
    for v in values:
        box.addItem(v, v)
    return box
