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
from core.tokens.counter import TokenCounter, default_counter


def count_pending(messages: Sequence[Message], counter: TokenCounter | None = None) -> list[int]:
    """The token count of each message: counted if pending, else its own. All pending
    texts go to tiktoken in one call."""
    todo = [m for m in messages if m.token_count == PENDING_TOKENS]
    counts = iter(
        (counter or default_counter()).count_messages(
            [(m.role, m.content, m.tool_calls, m.name) for m in todo]
        )
        if todo
        else ()
    )
    return [next(counts) if m.token_count == PENDING_TOKENS else m.token_count for m in messages]


def with_pending_counted(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every pending count replaced by the real one."""
    counts = count_pending(messages)
    return [
        m if m.token_count == n else replace(m, token_count=n)
        for m, n in zip(messages, counts, strict=True)
    ]
