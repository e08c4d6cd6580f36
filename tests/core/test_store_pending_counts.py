"""A message's token count may be written once after the message (STORE-2 with TOK-1).

Runs on every backend: the append-only triggers differ per dialect.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from core.errors import IntegrityError
from core.records import NewMessage
from core.store import Store
from core.store import schema as t
from core.store.triggers import FROZEN_COLUMNS, PENDING_TOKENS
from core.tokens.counter import TokenCounter

#: A different value for every column but the count (and the key).
CHANGES = {
    "trace_id": "other",
    "sequence": 99,
    "parent_sequence": 98,
    "line": 5,
    "depth": 5,
    "role": "tool",
    "content": "changed",
    "parts": [{"type": "text", "text": "p"}],
    "tool_calls": [{"id": "c", "name": "n", "arguments": "{}"}],
    "tool_call_id": "c",
    "name": "n",
    "goal_id": "2",
    "kind": "meta",
    "branch_type": "subagent",
    "branch_id": "b",
    "agent_name": "other",
    "usage": {"input_tokens": 1},
    "created_at": 1.0,
    "metadata": {"k": [2]},
}


def _trace(store: Store) -> str:
    with store.write() as w:
        tr = w.create_trace("pending", "test", None)
        w.append_counted(
            tr.id,
            [
                NewMessage("user", "alpha beta gamma", goal_id="1", metadata={"k": [1, None]}),
                NewMessage("assistant", "x", goal_id="1"),
            ],
            [PENDING_TOKENS, 7],
            None,
        )
    return tr.id


def test_store_frozen_columns_are_every_column_but_the_count() -> None:
    assert set(FROZEN_COLUMNS) == {c.name for c in t.messages.columns} - {"token_count"}
    assert set(CHANGES) == set(FROZEN_COLUMNS) - {"id"}


def test_store_pending_count_is_written_once(store: Store, backend: str) -> None:
    trace_id = _trace(store)
    m = t.messages.c
    first = (m.trace_id == trace_id, m.sequence == 0)
    for column, value in CHANGES.items():
        with pytest.raises(IntegrityError, match="append-only"), store.write() as w:
            w.conn.execute(
                update(t.messages).where(*first).values({column: value, "token_count": 5})
            )
    with pytest.raises(IntegrityError, match="append-only"), store.write() as w:
        w.conn.execute(update(t.messages).where(*first).values(token_count=-5))
    with store.write() as w:
        w.conn.execute(update(t.messages).where(*first).values(token_count=5))
    for bad in (6, PENDING_TOKENS):
        with pytest.raises(IntegrityError, match="append-only"), store.write() as w:
            w.conn.execute(update(t.messages).where(*first).values(token_count=bad))
    counted = (m.trace_id == trace_id, m.sequence == 1)
    with pytest.raises(IntegrityError, match="append-only"), store.write() as w:
        w.conn.execute(update(t.messages).where(*counted).values(token_count=8))
    with pytest.raises(IntegrityError, match="append-only"), store.write() as w:
        w.conn.execute(t.messages.delete().where(*first))
    with store.read() as r:
        rows = r.conn.execute(select(m.token_count).where(m.trace_id == trace_id)).all()
    assert sorted(n for (n,) in rows) == [5, 7]


def test_store_readers_count_pending_messages(store: Store, backend: str) -> None:
    trace_id = _trace(store)
    want = TokenCounter().count_message("user", "alpha beta gamma").tokens
    with store.read() as r:
        assert r.message(trace_id, 0).token_count == want
        assert [x.token_count for x in r.all_messages(trace_id)] == [want, 7]
        ((goal, n, tokens),) = r.goal_counts(trace_id)
        assert (goal, n, tokens) == ("1", 2, want + 7)
        r.count_pending = False
        assert r.message(trace_id, 0).token_count == PENDING_TOKENS
