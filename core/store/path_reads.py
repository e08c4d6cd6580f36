"""What the timeline's path and pages are read with, written once for both store readers:
``core/store/reader.py:Reader`` (SQLAlchemy) and ``core/store/first_page.py:QuickReader``
(``sqlite3`` alone, the start's first rows). Each implements the primitives in its own SQL
(``lines``, ``segments``, ``positions``, ``parents``, ``compactions``, ``segments_page``,
``main_path_previews``); ``path_rows``, ``fork_parents`` and ``main_path_page`` are written
here over them, so the timeline's first page and every later read agree by construction.
Code that takes either reader (the bands, the branches) is typed with ``EitherReader``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from core.store.paths import LineInfo, Segment, on_path

if TYPE_CHECKING:
    from core.records import CompactionEvent, Message
    from core.store.preview_record import MessagePreview

Row_co = TypeVar("Row_co", covariant=True)
"""What a page holds: ``Message`` (the ``Reader``) or ``MessagePreview`` (the first page's)."""

IN_CHUNK = 500
"""Sequences per ``IN (…)`` list (SQLite's default variable limit is far above; PostgreSQL's
planner likes short lists)."""


class PathReads(ABC, Generic[Row_co]):
    """The path reads of a store reader: ``path_rows``, ``fork_parents`` and
    ``main_path_page`` from the primitives below, which each reader implements."""

    @abstractmethod
    def lines(self, trace_id: str) -> dict[int, LineInfo]:
        raise NotImplementedError

    @abstractmethod
    def segments(self, trace_id: str, head: int | None = None) -> list[Segment]:
        """The path from the root to ``head`` (default: the trace's head) as segments."""
        raise NotImplementedError

    @abstractmethod
    def positions(self, trace_id: str, sequences: Sequence[int]) -> dict[int, tuple[int, int]]:
        """``(line, depth)`` of each given message; unknown sequences are left out."""
        raise NotImplementedError

    @abstractmethod
    def parents(self, trace_id: str, sequences: Sequence[int]) -> dict[int, int | None]:
        """The parent sequence of each given message; unknown sequences are left out."""
        raise NotImplementedError

    @abstractmethod
    def compactions(self, trace_id: str) -> list[CompactionEvent]:
        raise NotImplementedError

    @abstractmethod
    def segments_page(
        self, trace_id: str, offset: int, limit: int, segments: list[Segment]
    ) -> list[Row_co]:
        """Rows ``offset..offset+limit-1`` of the path ``segments``; row i is depth i."""
        raise NotImplementedError

    @abstractmethod
    def main_path_previews(
        self, trace_id: str, offset: int, limit: int, segments: list[Segment], chars: int
    ) -> list[MessagePreview]:
        """What a list row shows of rows ``offset..offset+limit-1`` (the content cut to
        ``chars``)."""
        raise NotImplementedError

    def main_path_page(
        self,
        trace_id: str,
        offset: int,
        limit: int,
        head: int | None = None,
        segments: list[Segment] | None = None,
    ) -> list[Row_co]:
        """Rows ``offset..offset+limit-1`` of the path to ``head`` (or of ``segments``, the
        path already read); row i is depth i."""
        segs = segments if segments is not None else self.segments(trace_id, head)
        return self.segments_page(trace_id, offset, limit, segs)

    def path_rows(
        self, trace_id: str, sequences: Sequence[int], segments: list[Segment]
    ) -> dict[int, int]:
        """Main-path row (= depth) of each given message that lies on ``segments``."""
        return {
            seq: depth
            for seq, (line, depth) in self.positions(trace_id, sequences).items()
            if on_path(segments, line, depth)
        }

    def fork_parents(self, trace_id: str) -> dict[int, int]:
        """For every line that forks off another: line -> sequence of the message it
        forks from (side branches and the abandoned side of a rewind)."""
        starts = {
            li.start_sequence: li.line
            for li in self.lines(trace_id).values()
            if li.parent_line is not None
        }
        return {
            starts[seq]: parent
            for seq, parent in self.parents(trace_id, sorted(starts)).items()
            if parent is not None
        }


if TYPE_CHECKING:
    EitherReader = PathReads[Message | MessagePreview]
    """A ``Reader`` or a ``QuickReader``: what code that takes either is typed with."""
