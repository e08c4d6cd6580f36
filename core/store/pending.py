"""Token counts of messages stored before they were counted (``PENDING_TOKENS``).

An import writes messages without counting them and fills the counts in after its commit
(``core/importers/counting.py:fill_pending``). A message read in between is counted as it
is read, so no reader ever sees a pending count; the figure is ``count_message``'s, the
same the writer stores for a message appended by a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from core.records import Message
from core.store.triggers import PENDING_TOKENS
from core.tokens.counter import TokenCounter, bounded_counter

_counter: TokenCounter | None = None


def with_pending_counted(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every pending count replaced by the real one (all pending texts
    in one tiktoken call; the memo keeps short texts only, so reading a whole imported
    trace does not hold its tool outputs in memory)."""
    global _counter
    todo = [m for m in messages if m.token_count == PENDING_TOKENS]
    if not todo:
        return list(messages)
    if _counter is None:
        _counter = bounded_counter()
    counts = iter(
        _counter.count_messages([(m.role, m.content, m.tool_calls, m.name) for m in todo])
    )
    return [
        replace(m, token_count=next(counts)) if m.token_count == PENDING_TOKENS else m
        for m in messages
    ]
