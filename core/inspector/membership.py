"""Which main-path rows are in the current context, without listing the context.

The current context (``core/context/view.py:current_items``) is the active boundary's
``context_after`` plus every later main-path message that is sent to models. So a row is
in the context when it lies after the boundary's anchor row (and is sendable) or when the
boundary kept its message. That test is O(1) per row, which lets the timeline dim rows of
a million-message trace without materialising a million-item list.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from core.context.view import NOT_SENT, active_boundary
from core.records import CompactionEvent, ContextItem, Message
from core.store.paths import Segment
from core.store.reader import Reader


@dataclass(frozen=True)
class ContextMembership:
    start_row: int
    """Main-path rows from here on are in the context (when sendable)."""
    kept: frozenset[int]
    """Messages the boundary kept (its ``context_after`` references)."""
    overridden: frozenset[int]
    """Kept messages shown with other content (markers, micro-compaction placeholders)."""
    boundary: CompactionEvent | None

    def contains(self, row: int, sequence: int, sendable: bool = True) -> bool:
        return sequence in self.kept or (row >= self.start_row and sendable)

    def status_text(self, rows: int) -> str:
        """What the current context holds of a path of ``rows`` rows, in the message numbers
        the timeline shows (``#sequence``, never a row index): the rows before the boundary
        its ``context_after`` kept (and how many of those are shortened), then the rows
        after it."""
        ev = self.boundary
        if ev is None:
            return "whole path in context"
        at = f"#{ev.at_sequence}" if ev.at_sequence is not None else "the start"
        kept, short, after = len(self.kept), len(self.overridden), rows - self.start_row
        shortened = f", {short} shortened" if short else ""
        if kept >= self.start_row:  # every row up to the boundary is still sent
            how = f", {short} of its messages shortened by" if short else ", kept by"
            return f"whole path in context{how} the compaction after {at}"
        if not kept:
            return f"current context starts after {at}"
        noun = "message" if kept == 1 else "messages"
        then = ", then every message sent after it" if after > 0 else ""
        return (
            f"current context: {kept:,} {noun} up to {at} kept by its compaction{shortened}{then}"
        )


def context_membership(
    reader: Reader, trace_id: str, head: int | None = None, segments: list[Segment] | None = None
) -> ContextMembership:
    segs = segments if segments is not None else reader.segments(trace_id, head)
    boundary = active_boundary(reader, trace_id, head)
    if boundary is None:
        return ContextMembership(0, frozenset(), frozenset(), None)
    start = _start_row(reader, trace_id, boundary, segs)
    kept = frozenset(i.sequence for i in boundary.context_after if i.sequence is not None)
    changed = frozenset(
        i.sequence for i in boundary.context_after if i.sequence is not None and i.content
    )
    return ContextMembership(start, kept, changed, boundary)


def _start_row(reader: Reader, trace_id: str, ev: CompactionEvent, segs: list[Segment]) -> int:
    if ev.at_sequence is None:
        return 0
    rows = reader.path_rows(trace_id, [ev.at_sequence], segs)
    return rows[ev.at_sequence] + 1


def iter_current(
    reader: Reader, trace_id: str, head: int | None = None, page: int = 2000
) -> Iterator[tuple[ContextItem, Message | None]]:
    """The current context item by item with its message, in bounded memory.

    Yields exactly ``current_items`` (same items, same order), each with its resolved
    message (``None`` for synthetic items).
    """
    segs = reader.segments(trace_id, head)
    member = context_membership(reader, trace_id, head, segs)
    if member.boundary is not None:
        yield from resolve_items(reader, trace_id, member.boundary.context_after)
    total = sum(len(s) for s in segs)
    for offset in range(member.start_row, total, page):
        for m in reader.main_path_page(trace_id, offset, page, segments=segs):
            if m.kind not in NOT_SENT:
                yield ContextItem(m.sequence), m


def resolve_items(
    reader: Reader, trace_id: str, items: tuple[ContextItem, ...] | list[ContextItem]
) -> Iterator[tuple[ContextItem, Message | None]]:
    """Items with their messages, fetched 500 at a time."""
    for i in range(0, len(items), 500):
        chunk = items[i : i + 500]
        msgs = reader.messages(trace_id, [c.sequence for c in chunk if c.sequence is not None])
        for c in chunk:
            yield c, (msgs.get(c.sequence) if c.sequence is not None else None)
