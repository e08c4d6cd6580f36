"""Store basics on a real SQLite file: append, main path, side branches, rewind, reopen."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.errors import IntegrityError, NotFoundError
from core.records import NewMessage, ToolCall
from core.store import Store


def _chat(n: int) -> list[NewMessage]:
    return [NewMessage("user" if i % 2 == 0 else "assistant", f"message {i}") for i in range(n)]


def test_append_assigns_sequences_and_moves_head(store: Store) -> None:
    tr = store.create_trace("t")
    msgs = store.append(tr.id, _chat(5))
    assert [m.sequence for m in msgs] == [0, 1, 2, 3, 4]
    assert [m.parent_sequence for m in msgs] == [None, 0, 1, 2, 3]
    assert store.trace(tr.id).head == 4
    assert all(m.token_count > 0 for m in msgs)


def test_side_branch_is_off_the_main_path(store: Store) -> None:
    tr = store.create_trace("t")
    store.append(tr.id, _chat(3))
    with store.write() as w:
        side = w.append(
            tr.id,
            [NewMessage("assistant", "summary", branch_type="compression", branch_id="c1")],
            parent=2,
        )
    assert store.trace(tr.id).head == 2, "a side branch never moves the head"
    store.append(tr.id, [NewMessage("user", "next")])
    with store.read() as r:
        path = [m.sequence for m in r.iter_main_path(tr.id)]
        assert side[0].sequence not in path
        assert path == [0, 1, 2, 4]
        assert [m.content for m in r.all_messages(tr.id) if m.branch_id == "c1"] == ["summary"]


def test_rewind_keeps_everything_and_new_messages_fork(store: Store) -> None:
    tr = store.create_trace("t")
    store.append(tr.id, _chat(6))
    old, new = store.rewind(tr.id, 2)
    assert (old, new) == (5, 2)
    store.append(tr.id, [NewMessage("user", "different")])
    with store.read() as r:
        assert [m.sequence for m in r.iter_main_path(tr.id)] == [0, 1, 2, 6]
        assert r.trace(tr.id).messages == 7
        # the abandoned branch is still reachable from its old tip
        assert [m.sequence for m in r.iter_main_path(tr.id, head=5)] == [0, 1, 2, 3, 4, 5]


def test_messages_are_append_only(store: Store) -> None:
    tr = store.create_trace("t")
    store.append(tr.id, _chat(2))
    with pytest.raises(IntegrityError), store.write() as w:
        w.conn.exec_driver_sql("UPDATE messages SET content = 'changed'")
    with pytest.raises(IntegrityError), store.write() as w:
        w.conn.exec_driver_sql("DELETE FROM messages")
    with store.read() as r:
        assert [m.content for m in r.iter_main_path(tr.id)] == ["message 0", "message 1"]


def test_reopen_keeps_data_and_tool_calls(store_path: Path) -> None:
    with Store.open(store_path) as s:
        tr = s.create_trace("t")
        s.append(
            tr.id,
            [
                NewMessage("assistant", "", tool_calls=(ToolCall("c1", "read", '{"p": 1}'),)),
                NewMessage("tool", "out", tool_call_id="c1", name="read"),
            ],
        )
    with Store.open(store_path) as s, s.read() as r:
        m0, m1 = r.iter_main_path(tr.id)
        assert m0.tool_calls == (ToolCall("c1", "read", '{"p": 1}'),)
        assert m1.tool_call_id == "c1"


def test_missing_trace_is_a_clear_error(store: Store) -> None:
    with pytest.raises(NotFoundError, match="nope"):
        store.trace("nope")


def test_json_fields_round_trip_through_the_fast_insert(store: Store) -> None:
    tr = store.create_trace("t")
    parts = ({"type": "text", "text": "é"}, {"type": "image", "ref": "img-1"})
    store.append(
        tr.id,
        [
            NewMessage(
                "user", "é", parts=parts, usage={"prompt_tokens": 3}, metadata={"k": [1, None, "x"]}
            )
        ],
    )
    with store.read() as r:
        (m,) = r.iter_main_path(tr.id)
    assert m.parts == parts and m.usage == {"prompt_tokens": 3}
    assert m.metadata == {"k": [1, None, "x"]} and m.tool_calls == ()


def test_task_snapshots_group_by_sequence(store: Store) -> None:
    tr = store.create_trace("t")
    store.append(tr.id, _chat(3))
    with store.write() as w:
        w.set_tasks(tr.id, 1, [{"id": "a", "content": "first"}])
        w.set_tasks(tr.id, 2, [{"id": "a", "status": "completed"}, {"id": "b", "content": "x"}])
    with store.read() as r:
        snaps = r.task_snapshots(tr.id)
    assert sorted(snaps) == [1, 2]
    assert [t["id"] for t in snaps[2]] == ["a", "b"]
    assert snaps[2][0]["status"] == "completed"
    assert snaps[1][0]["status"] == "pending"


def test_writer_knows_next_sequence_and_head_inside_a_transaction(store: Store) -> None:
    tr = store.create_trace("t")
    with store.write() as w:
        assert w.next_sequence(tr.id) == 0
        assert w.head(tr.id) is None
        w.append(tr.id, _chat(2))
        assert w.next_sequence(tr.id) == 2
        assert w.head(tr.id) == 1


def test_append_counted_writes_what_append_writes(store: Store, backend: str) -> None:
    """The importers' bulk path stores the same rows as ``append`` (counts given, head kept),
    including JSON values the fast encoder must hand to ``json``, one per message: integers
    beyond 64 bits, non-string keys, lone surrogates, non-finite floats (SQLite only:
    PostgreSQL refuses them on either path)."""
    odd: list[Any] = [
        {"big": 2**70, "neg": -(2**64)},
        {1: "int key"},
        {"s": "\ud800 lone"},
        {"nested": {"null": None, "f": 1e16, "t": (1, 2)}},
    ]
    if backend == "sqlite":
        odd += [{"nan": float("nan")}, {"inf": [float("inf"), float("-inf")], "x": None}]
    msgs = [
        NewMessage("user", "hi", metadata={"k": [1, None, "x"]}),
        NewMessage(
            "assistant",
            "",
            tool_calls=(ToolCall("c1", "read", '{"p": 1}'),),
            parts=({"type": "thinking", "thinking": "é"},),
            usage={"input_tokens": 5},
        ),
        NewMessage("tool", "out", tool_call_id="c1", name="read"),
        *(NewMessage("user", f"odd {i}", metadata=m) for i, m in enumerate(odd)),
    ]
    counts = list(range(7, 7 + len(msgs)))
    a = store.create_trace("a")
    b = store.create_trace("b")
    store.append(a.id, [NewMessage("system", "root")])
    store.append(b.id, [NewMessage("system", "root")])
    store.append(a.id, [replace(m, token_count=n) for m, n in zip(msgs, counts, strict=True)])
    with store.write() as w:
        first = w.append_counted(b.id, msgs, counts, parent=0)
        assert first == 1 and w.head(b.id) == 0, "the head does not move"
        w.set_head(b.id, len(msgs))
    with store.read() as r:
        got_a = list(r.iter_main_path(a.id))
        got_b = list(r.iter_main_path(b.id))
        found = [r.search(tr, tool_name="read") for tr in (a.id, b.id)]
    assert found[0] == found[1] == [2, 3], "calls and results found by tool name on both paths"

    def same(m: Any) -> tuple[Any, ...]:
        meta = json.dumps(m.metadata, sort_keys=True, default=str)  # NaN != NaN: compare text
        return (
            m.sequence,
            m.parent_sequence,
            m.role,
            m.content,
            m.parts,
            m.tool_calls,
            m.tool_call_id,
            m.name,
            m.kind,
            m.token_count,
            m.usage,
            meta,
            m.line,
            m.depth,
        )

    assert [same(m) for m in got_b] == [same(m) for m in got_a]
    meta = [m.metadata for m in got_b[4:]]
    assert meta[0] == {"big": 2**70, "neg": -(2**64)} and meta[1] == {"1": "int key"}
    assert meta[2] == {"s": "\ud800 lone"} and meta[3]["nested"]["t"] == [1, 2]
    if backend == "sqlite":
        assert math.isnan(meta[4]["nan"])
        assert meta[5] == {"inf": [float("inf"), float("-inf")], "x": None}


def _page_size(path: Path) -> int:
    import sqlite3

    with sqlite3.connect(path) as raw:
        return int(raw.execute("PRAGMA page_size").fetchone()[0])


def test_a_new_store_has_large_pages_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    """New stores get ``PAGE_SIZE`` pages (a long message is fewer overflow pages and WAL
    frames); a store made with SQLite's default 4096 opens, takes writes and keeps 4096."""
    import sqlite3

    from core.store.engine import PAGE_SIZE

    fresh = tmp_path / "new.db"
    with Store.open(fresh) as store:
        tr = store.create_trace("t")
        store.append(tr.id, [NewMessage("tool", "x" * 50_000)])
    assert PAGE_SIZE != 4096 and _page_size(fresh) == PAGE_SIZE

    old = tmp_path / "old.db"
    with sqlite3.connect(old) as raw:  # an empty file of 4 KB pages, as before
        raw.execute("PRAGMA page_size=4096")
        raw.execute("VACUUM")
    with Store.open(old) as store:
        tr = store.create_trace("t")
        store.append(tr.id, [NewMessage("tool", "y" * 50_000)])
    with Store.open(old) as store, store.read() as r:
        assert r.messages(tr.id, [0])[0].content == "y" * 50_000
    assert _page_size(old) == 4096
