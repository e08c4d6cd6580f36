"""The timeline's row pages: a bounded LRU, filled off the UI thread.

Painting a row never waits for the store: a page not in the cache is requested from a task
runner and the row paints as a placeholder until the page arrives (``loaded``). Only the
newest few requests stay queued, so a fast scroll across a million rows does not leave a
backlog of pages nobody looks at any more. Without a runner (tests of the model alone,
scripts) a page is fetched where it is asked for.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from core.inspector.timeline import TimelineRow
from ui.tasks import TaskControl, TaskRunner

Fetch = Callable[[int], list[TimelineRow] | None]
"""Page number → its rows (runs on a worker thread when there is a runner); ``None``: not
readable yet (the page is asked for again, ``cancel_queued``)."""


class PageCache(QObject):
    loaded = Signal(int)
    """A page arrived from the runner (its number)."""

    def __init__(
        self,
        max_pages: int,
        runner: TaskRunner | None = None,
        max_queued: int = 3,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.max_pages = max_pages
        self.max_queued = max_queued
        self.runner = runner
        self.fetch: Fetch | None = None
        self.fetched = 0
        self._pages: OrderedDict[int, list[TimelineRow]] = OrderedDict()
        self._queued: OrderedDict[int, None] = OrderedDict()
        self._generation = 0

    def reset(self, fetch: Fetch | None) -> None:
        """A new path: forget every page and drop the answers still on their way."""
        self.fetch = fetch
        self._pages.clear()
        self.cancel_queued()
        self._generation += 1

    def cancel_queued(self) -> None:
        for page_no in list(self._queued):
            self._cancel(page_no)

    def forget(self, page_no: int) -> None:
        """A page changed (a live trace's partial last page): fetch it again when asked."""
        self._pages.pop(page_no, None)
        if page_no in self._queued:
            self._cancel(page_no)

    def items(self) -> list[tuple[int, list[TimelineRow]]]:
        """The cached pages (number, rows), without touching their recency."""
        return list(self._pages.items())

    def __len__(self) -> int:
        return len(self._pages)

    @property
    def loading(self) -> bool:
        return bool(self._queued)

    def cached(self, page_no: int) -> list[TimelineRow] | None:
        """The page if it is here (then it is the most recently used); never blocks."""
        page = self._pages.get(page_no)
        if page is not None:
            self._pages.move_to_end(page_no)
        return page

    def get(self, page_no: int) -> list[TimelineRow]:
        """The page, fetched here and now when it is not cached (blocking)."""
        page = self.cached(page_no)
        if page is None:
            page = self._fetch_now(page_no)
        return page

    def want(self, page_no: int) -> list[TimelineRow] | None:
        """The page if cached; else ask for it (on the runner when there is one)."""
        page = self.cached(page_no)
        if page is not None or self.fetch is None:
            return page
        if self.runner is None:
            return self._fetch_now(page_no)
        if page_no not in self._queued:
            self._queue(page_no)
        return None

    def _fetch_now(self, page_no: int) -> list[TimelineRow]:
        if self.fetch is None:
            return []
        self.fetched += 1
        page = self.fetch(page_no)
        if page is None:
            return []
        self.keep(page_no, page)
        return page

    def _queue(self, page_no: int) -> None:
        assert self.runner is not None and self.fetch is not None
        fetch, generation = self.fetch, self._generation
        while len(self._queued) >= self.max_queued:  # scrolled past: nobody waits for it
            self._cancel(next(iter(self._queued)))
        self._queued[page_no] = None
        self.fetched += 1

        def task(c: TaskControl) -> list[TimelineRow] | None:
            return None if c.cancelled else fetch(page_no)

        self.runner.submit(
            f"timeline page {page_no}",
            task,
            lambda page: self._arrived(generation, page_no, page),
            key=_key(page_no),
            priority=2,
        )

    def _cancel(self, page_no: int) -> None:
        self._queued.pop(page_no, None)
        if self.runner is not None:
            self.runner.cancel(_key(page_no))

    def _arrived(self, generation: int, page_no: int, page: list[TimelineRow] | None) -> None:
        if generation != self._generation or page is None:
            return
        self._queued.pop(page_no, None)
        self.keep(page_no, page)
        self.loaded.emit(page_no)

    def keep(self, page_no: int, page: list[TimelineRow]) -> None:
        self._pages[page_no] = page
        self._pages.move_to_end(page_no)
        while len(self._pages) > self.max_pages:
            self._pages.popitem(last=False)


def _key(page_no: int) -> str:
    return f"timeline-page:{page_no}"
