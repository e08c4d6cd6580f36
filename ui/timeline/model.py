"""The timeline model: rows of a trace's path, fetched a page at a time.

Like Anki's browser table it keeps only what it needs: the path as a few line segments,
the compaction bands (one per boundary), and a bounded cache of row pages
(``ui/timeline/pages.py:PageCache``). ``rowCount`` is the path length plus the bands;
painting a row asks for its page (``Reader.main_path_previews``: index range scans of
the fields a row shows) on the task runner and shows a placeholder (``LOADING``) until it
arrives, so the cost grows with what is visible, not with the trace, and a frame never
waits for the store.

View rows interleave bands with messages: a band anchored after path row ``p`` sits right
after that row. With ``set_filter`` the model shows only the given path rows (no bands).
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from core.inspector.bands import Band
from core.inspector.branches import branch_label
from core.inspector.timeline import READ_CHARS, TimelineRow, row_of
from core.store.first_page import NeedsStore, PathStore
from core.store.paths import Segment
from ui.panes.table_model import read_only_flags
from ui.plain import plain_tip
from ui.tasks import TaskRunner
from ui.timeline.pages import PageCache

if TYPE_CHECKING:  # the membership's module loads the store's reader (SQLAlchemy)
    from core.inspector.membership import ContextMembership

RowRole = Qt.ItemDataRole.UserRole + 1
"""The row's record: a ``TimelineRow`` or a ``Band``."""
InContextRole = Qt.ItemDataRole.UserRole + 2
SequenceRole = Qt.ItemDataRole.UserRole + 3
MatchRole = Qt.ItemDataRole.UserRole + 4
LaterRole = Qt.ItemDataRole.UserRole + 5
"""Playback: the row comes after the call being shown ("not yet")."""
CursorRole = Qt.ItemDataRole.UserRole + 6
"""Playback: the head of the call being shown."""
ShortenedRole = Qt.ItemDataRole.UserRole + 7
"""The current context holds the row's message with other content (a compaction's marker,
an elided tool output): the row shows the stored message, the model gets less."""

Index = QModelIndex | QPersistentModelIndex
FETCH_CHUNK = 32
"""Rows read and built between two hand-backs of the GIL (``fetch_page``)."""
PAGE_SIZE = 256


class Loading:
    """The record of a row whose page is on its way (painted as a placeholder)."""

    def __repr__(self) -> str:
        return "LOADING"


LOADING = Loading()


class TimelineModel(QAbstractListModel):
    rows_loaded = Signal(int, int)
    """View rows ``first..last`` got their records (a page arrived off the UI thread)."""

    def __init__(
        self,
        parent: Any = None,
        page_size: int = PAGE_SIZE,
        max_pages: int = 48,
        runner: TaskRunner | None = None,
    ) -> None:
        """With a ``runner`` painting never reads the store on the UI thread (pages load
        on it); without one a page is fetched where it is asked for."""
        super().__init__(parent)
        self.page_size = page_size
        self.max_pages = max_pages
        self.page_cache = PageCache(max_pages, runner, parent=self)
        """The row pages in memory (bounded; ``fetched`` counts the reads of this path)."""
        self.page_cache.loaded.connect(self._page_arrived)
        self.store: PathStore | None = None
        """A ``Store``, or the first page's ``QuickStore`` until ``use_store``."""
        self.trace_id: str | None = None
        self.head: int | None = None
        self.segments: list[Segment] = []
        self.length = 0
        self.bands: list[Band] = []
        self._band_rows: list[int] = []
        self._after_rows: list[int] = []
        self.forks: dict[int, tuple[str, ...]] = {}
        self.membership: ContextMembership | None = None
        self.matches: frozenset[int] = frozenset()
        self._filter: list[int] | None = None
        self.playback: tuple[int, frozenset[int]] | None = None
        """Playback: ``(head row, sequences in that call's context)``; rows after the head
        are "not yet", and "in context" means in that call's context."""

    # -- source ---------------------------------------------------------------------------
    def set_source(
        self,
        store: PathStore | None,
        trace_id: str | None,
        head: int | None,
        segments: list[Segment],
        bands: list[Band],
        forks: dict[int, tuple[str, ...]],
    ) -> None:
        """Point the model at a path (computed by the caller, possibly off the UI thread)."""
        self.beginResetModel()
        self.store, self.trace_id, self.head = store, trace_id, head
        self.segments = segments
        self.length = sum(len(s) for s in segments)
        self.bands = bands
        self._after_rows = [b.after_row for b in bands]
        self._band_rows = [b.after_row + 1 + i for i, b in enumerate(bands)]
        self.forks = forks
        self.membership = None
        self.matches = frozenset()
        self._filter = None
        self.playback = None
        self.page_cache.reset(self._fetch if store is not None and trace_id is not None else None)
        self.endResetModel()

    def clear(self) -> None:
        self.set_source(None, None, None, [], [], {})

    def grow(
        self, segments: list[Segment], bands: list[Band], forks: dict[int, tuple[str, ...]]
    ) -> bool:
        """A live trace grew: insert the new rows (no reset, so the view keeps its selection
        and scroll). A compaction band recorded late lands among the old rows; messages go
        at the end. ``False`` when the path changed otherwise (a rewind, a filter or
        playback shown): the caller resets."""
        if not self._extends(segments, bands):
            return False
        current = list(self.bands)
        for band in bands:
            if band in self.bands or band.after_row >= self.length - 1:
                continue
            at = bisect_right([b.after_row for b in current], band.after_row)
            row = band.after_row + 1 + at
            self.beginInsertRows(QModelIndex(), row, row)
            current.insert(at, band)
            self._set_bands(current)
            self.endInsertRows()
        length = sum(len(s) for s in segments)
        first, last = self.rowCount(), length + len(bands) - 1
        if last >= first:
            self.beginInsertRows(QModelIndex(), first, last)
        for page_no in {max(0, self.length - 1) // self.page_size, self.length // self.page_size}:
            self.page_cache.forget(page_no)  # the old last page was partial
        self.segments, self.length, self.forks = segments, length, forks
        self._set_bands(bands)
        if last >= first:
            self.endInsertRows()
        return True

    def _set_bands(self, bands: list[Band]) -> None:
        self.bands = bands
        self._after_rows = [b.after_row for b in bands]
        self._band_rows = [b.after_row + 1 + i for i, b in enumerate(bands)]

    def _extends(self, segments: list[Segment], bands: list[Band]) -> bool:
        """The new path is the old one plus rows at its end, and keeps every old band."""
        old = self.segments
        if self._filter is not None or self.playback is not None or self.store is None:
            return False
        if len(segments) < len(old) or segments[: max(0, len(old) - 1)] != old[:-1]:
            return False
        if old:
            was, now = old[-1], segments[len(old) - 1]
            if (now.line, now.first) != (was.line, was.first) or now.last < was.last:
                return False
        kept = [b for b in bands if b in self.bands]
        return kept == self.bands

    def set_membership(self, membership: ContextMembership | None) -> None:
        self.membership = membership
        self._changed_all()

    def set_playback(self, head_row: int | None, in_context: frozenset[int] = frozenset()) -> None:
        """Show the path as a past call saw it (``None``: the current state again)."""
        self.playback = None if head_row is None else (head_row, in_context)
        self._changed_all()

    def later(self, path_row: int) -> bool:
        return self.playback is not None and path_row > self.playback[0]

    def set_matches(self, sequences: frozenset[int]) -> None:
        self.matches = sequences
        self._changed_all()

    def set_filter(self, path_rows: list[int] | None) -> None:
        """Show only these path rows (ascending), or everything again with ``None``."""
        self.beginResetModel()
        self._filter = sorted(path_rows) if path_rows is not None else None
        self.endResetModel()

    def _changed_all(self) -> None:
        n = self.rowCount()
        if n:
            self.dataChanged.emit(self.index(0), self.index(n - 1))

    # -- row mapping ----------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid():
            return 0
        if self._filter is not None:
            return len(self._filter)
        return self.length + len(self.bands)

    def locate(self, view_row: int) -> tuple[str, int]:
        """``("band", band index)`` or ``("row", path row)`` for a view row."""
        if self._filter is not None:
            return "row", self._filter[view_row]
        i = bisect_right(self._band_rows, view_row)
        if i and self._band_rows[i - 1] == view_row:
            return "band", i - 1
        return "row", view_row - i

    def view_row_of(self, path_row: int) -> int | None:
        """The view row showing path row ``path_row`` (``None`` when filtered out)."""
        if self._filter is not None:
            i = bisect_left(self._filter, path_row)
            return i if i < len(self._filter) and self._filter[i] == path_row else None
        return path_row + bisect_left(self._after_rows, path_row)

    def row_record(self, view_row: int) -> TimelineRow | Band | None:
        if not 0 <= view_row < self.rowCount():
            return None
        what, n = self.locate(view_row)
        if what == "band":
            return self.bands[n]
        return self.path_row(n)

    def loaded_record(self, view_row: int) -> TimelineRow | Band | Loading | None:
        """Like ``row_record`` but never blocks: ``LOADING`` while the row's page loads."""
        if not 0 <= view_row < self.rowCount():
            return None
        what, n = self.locate(view_row)
        return self.bands[n] if what == "band" else self.loaded_row(n)

    def cached_path_row(self, sequence: int) -> int | None:
        """The path row of message ``sequence`` if it is on a page in memory."""
        for page_no, page in self.page_cache.items():
            for offset, row in enumerate(page):
                if row.sequence == sequence:
                    return page_no * self.page_size + offset
        return None

    def path_row(self, path_row: int) -> TimelineRow | None:
        """The row, fetched here and now when its page is not cached (blocking: for code
        that needs one row's record; painting uses ``loaded_row``)."""
        page_no, offset = divmod(path_row, self.page_size)
        page = self.page_cache.get(page_no)
        return page[offset] if offset < len(page) else None

    def loaded_row(self, path_row: int) -> TimelineRow | Loading | None:
        """The row if its page is cached; else ``LOADING`` and its page is requested."""
        page_no, offset = divmod(path_row, self.page_size)
        page = self.page_cache.want(page_no)
        if page is None:
            return LOADING
        return page[offset] if offset < len(page) else None

    def _fetch(self, page_no: int) -> list[TimelineRow] | None:
        """One page's rows (on a worker thread when the model has a runner); ``None`` when
        the first page's reader cannot read it (the ``Store`` will, after ``use_store``)."""
        assert self.store is not None and self.trace_id is not None
        try:
            return fetch_page(
                self.store, self.trace_id, self.segments, self.forks, page_no, self.page_size
            )
        except NeedsStore:
            return None

    def use_store(self, store: PathStore) -> None:
        """Read the same path through ``store`` from now on (the first page's ``sqlite3``
        reader hands over to the ``Store``): the pages in memory stay, the ones still on
        their way are asked for again when painted."""
        self.store = store
        self.page_cache.cancel_queued()
        self._changed_all()

    def seed(self, page_no: int, rows: list[TimelineRow]) -> None:
        """A page read ahead with the path (the one the view opens on); counted as
        fetched, so ``page_cache.fetched`` stays the number of pages read for this path."""
        self.page_cache.fetched += 1
        self.page_cache.keep(page_no, rows)

    def _page_arrived(self, page_no: int) -> None:
        first = page_no * self.page_size
        last = min(self.length, first + self.page_size) - 1
        if self._filter is not None:
            lo, hi = bisect_left(self._filter, first), bisect_right(self._filter, last) - 1
        else:
            lo, hi = self.view_row_of(first) or 0, self.view_row_of(last) or 0
        if 0 <= lo <= hi < self.rowCount():
            self.dataChanged.emit(self.index(lo), self.index(hi))
            self.rows_loaded.emit(lo, hi)

    @property
    def loading(self) -> bool:
        """Some page is still on its way."""
        return self.page_cache.loading

    # -- Qt data ---------------------------------------------------------------------------
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        what, n = self.locate(index.row())
        if what == "band":
            band = self.bands[n]
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                return band.text
            if role == RowRole:
                return band
            return None
        return self._row_data(n, role)

    def _row_data(self, path_row: int, role: int) -> Any:
        row = self.loaded_row(path_row)
        if isinstance(row, Loading):
            return _loading_data(role)
        if row is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return f"#{row.sequence} {row.role}: {row.preview}"
        if role == RowRole:
            return row
        if role == SequenceRole:
            return row.sequence
        if role == InContextRole:
            return self.in_context(path_row, row)
        if role == ShortenedRole:
            return self.shortened(row)
        if role == MatchRole:
            return row.sequence in self.matches
        if role == LaterRole:
            return self.later(path_row)
        if role == CursorRole:
            return self.playback is not None and path_row == self.playback[0]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(path_row, row)
        return None

    def in_context(self, path_row: int, row: TimelineRow) -> bool:
        if self.playback is not None:
            return path_row <= self.playback[0] and row.sequence in self.playback[1]
        m = self.membership
        return True if m is None else m.contains(path_row, row.sequence, row.sendable)

    def shortened(self, row: TimelineRow) -> bool:
        """The current context holds this message with other content (``ShortenedRole``)."""
        m = self.membership
        return self.playback is None and m is not None and row.sequence in m.overridden

    def _tooltip(self, path_row: int, row: TimelineRow) -> str:
        if self.later(path_row):
            state = "not yet: after the call being played back"
        elif self.playback is not None:
            live = self.in_context(path_row, row)
            state = "in that call's context" if live else "not in that call's context"
        elif self.shortened(row):
            state = "in the current context, shortened by a compaction (the Context pane shows it)"
        elif self.in_context(path_row, row):
            state = "in the current context"
        else:
            state = "not in context"
        goal = f", goal {row.goal_id}" if row.goal_id else ""
        forks = self.forks.get(row.sequence, ())
        branches = "".join(
            f"\n{'An' if kind == 'abandoned' else 'A'} {branch_label(kind)} branch forks off "
            "after this message (Navigate → Show branches, Ctrl+B)"
            for kind in dict.fromkeys(forks)
        )
        return plain_tip(
            f"#{row.sequence} {row.role} ({row.kind}{goal}), {row.tokens:,} tokens — {state}"
            + branches
        )

    def flags(self, index: Index) -> Qt.ItemFlag:
        return read_only_flags(index)


def _loading_data(role: int) -> Any:
    if role == RowRole:
        return LOADING
    if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
        return "loading…"
    return None


def fetch_page(
    store: PathStore,
    trace_id: str,
    segments: list[Segment],
    forks: dict[int, tuple[str, ...]],
    page_no: int,
    page_size: int = PAGE_SIZE,
) -> list[TimelineRow]:
    """Rows of page ``page_no`` of a path, read in small chunks that each hand the GIL back:
    decoding holds it, and the UI thread, which takes it again after every Qt call, would
    otherwise wait up to the interpreter's switch interval (5 ms) each time — a convoy of a
    few hundred ms per frame."""
    out: list[TimelineRow] = []
    start = page_no * page_size
    with store.read() as r:
        for offset in range(start, start + page_size, FETCH_CHUNK):
            size = min(FETCH_CHUNK, start + page_size - offset)
            msgs = r.main_path_previews(trace_id, offset, size, segments, READ_CHARS)
            out.extend(row_of(m, forks.get(m.sequence, ())) for m in msgs)
            time.sleep(0)
            if len(msgs) < size:
                break
    return out
