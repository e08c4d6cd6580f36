"""The path reads both store readers answer the same way, over two primitives each reader
implements in its own SQL: ``positions`` (line and depth of messages) and ``parents`` (their
parent sequences). ``core/store/reader.py:Reader`` (SQLAlchemy) and
``core/store/first_page.py:QuickReader`` (``sqlite3`` alone, the start's first rows) inherit
them, so the timeline's first page and every later read agree by construction."""

from __future__ import annotations

from collections.abc import Sequence

from core.store.paths import LineInfo, Segment, on_path

IN_CHUNK = 500
"""Sequences per ``IN (…)`` list (SQLite's default variable limit is far above; PostgreSQL's
planner likes short lists)."""


class PathReads:
    """``path_rows`` and ``fork_parents`` from ``positions``, ``parents`` and ``lines``."""

    def lines(self, trace_id: str) -> dict[int, LineInfo]:
        raise NotImplementedError

    def positions(self, trace_id: str, sequences: Sequence[int]) -> dict[int, tuple[int, int]]:
        """``(line, depth)`` of each given message; unknown sequences are left out."""
        raise NotImplementedError

    def parents(self, trace_id: str, sequences: Sequence[int]) -> dict[int, int | None]:
        """The parent sequence of each given message; unknown sequences are left out."""
        raise NotImplementedError

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
