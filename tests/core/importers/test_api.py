"""The core import API the GUI calls: progress in bytes, cancel, re-import detection."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from sqlalchemy import select

from core.importers.api import import_paths, plan
from core.importers.counting import fill_pending
from core.importers.idmap import IdMap
from core.store import Store
from core.store import schema as t
from core.store.triggers import PENDING_TOKENS
from core.tokens.counter import TokenCounter

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def _counts(store: Store) -> tuple[int, int]:
    with store.read() as r:
        traces = r.conn.exec_driver_sql("SELECT count(*) FROM traces").scalar_one()
        msgs = r.conn.exec_driver_sql("SELECT count(*) FROM messages").scalar_one()
    return traces, msgs


def test_progress_reaches_the_total(store: Store) -> None:
    seen: list[tuple[int, int]] = []
    paths = [FIX / "claude_code", FIX / "codex"]
    import_paths(store, paths, progress=lambda done, total: seen.append((done, total)))
    total = sum(f.stat().st_size for u in plan(paths) for f in u.files)
    assert seen[-1] == (total, total)
    assert all(d <= t == total for d, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_cancel_rolls_back_the_current_unit(store: Store, tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    line = (FIX / "openai/conversations.jsonl").read_text().splitlines()[0]
    big.write_text((line + "\n") * 4000)
    cancel = threading.Event()
    calls = 0
    first = (FIX / "codex/rollout-compacted.jsonl").stat().st_size

    def progress(done: int, total: int) -> None:
        nonlocal calls
        calls += 1
        if first < done < total:  # while the big file is being written
            cancel.set()

    results = import_paths(store, [FIX / "codex", big], progress=progress, cancel=cancel)
    assert cancel.is_set() and calls
    assert [Path(r.path).name for r in results] == ["rollout-compacted.jsonl"]
    traces, _ = _counts(store)
    assert traces == 1, "the cancelled file left nothing behind"


def test_reimport_is_detected_by_content(store: Store, tmp_path: Path) -> None:
    (first,) = import_paths(store, [FIX / "codex/rollout-compacted.jsonl"])
    before = _counts(store)
    copy = tmp_path / "renamed.jsonl"
    shutil.copy(FIX / "codex/rollout-compacted.jsonl", copy)
    (again,) = import_paths(store, [copy])
    assert again.duplicate and again.trace_id == first.trace_id
    assert (again.messages, again.tool_calls, again.compactions) == (
        first.messages,
        first.tool_calls,
        first.compactions,
    )
    assert _counts(store) == before
    copy.write_bytes(copy.read_bytes() + b"\n")  # different content: a new trace
    (third,) = import_paths(store, [copy])
    assert not third.duplicate and third.trace_id != first.trace_id


def test_errors_can_be_collected_per_unit(store: Store, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text((FIX / "codex/rollout-compacted.jsonl").read_text()[:-30])
    results = import_paths(store, [bad, FIX / "openhands"], stop_on_error=False)
    errors = [r.error for r in results if r.error]
    assert len(errors) == 1 and "bad.jsonl" in errors[0]
    assert sum(1 for r in results if not r.error) == 2


def test_idmap_spills_to_the_transaction(store: Store) -> None:
    with store.write() as w:
        ids = IdMap(w.conn, capacity=10)
        for i in range(100):
            ids[f"k{i}"] = i
        assert [ids.get(f"k{i}") for i in (0, 5, 50, 99)] == [0, 5, 50, 99]
        assert ids.get("missing") is None and len(ids._mem) <= 10
        ids["k0"] = 7
        assert ids.get("k0") == 7
        ids.close()


def test_idmap_update_all_is_one_set_per_key(store: Store) -> None:
    """A unit's uuids set at once give what setting them one by one gives, spilled or not."""
    with store.write() as w:
        one, many = IdMap(w.conn, capacity=10), IdMap(w.conn, capacity=10)
        for unit in range(30):
            keys = [f"u{unit}-{i}" for i in range(unit % 7)] + ["shared"]
            for k in keys:
                one[k] = unit
            many.update_all(keys, unit)
        assert len(many._mem) <= 10, "memory stays bounded"
        names = [f"u{u}-{i}" for u in range(30) for i in range(u % 7)] + ["shared", "none"]
        assert [many.get(k) for k in names] == [one.get(k) for k in names]
        assert many.get("shared") == 29 and many.get("u3-2") == 3
        one.close()
        many.close()


def test_builder_writes_every_field_and_the_count_is_filled_once(store: Store) -> None:
    """``TraceBuilder`` writes a message with a pending count; every field arrives, a
    reader sees the real count before ``fill_pending`` and the same one stored after."""
    from dataclasses import fields

    from core.importers.base import ImportContext, TraceBuilder
    from core.records import NewMessage

    sample = NewMessage(
        "assistant",
        "text",
        parts=({"type": "text", "text": "text"},),
        tool_call_id="c",
        name="n",
        goal_id="1.2",
        kind="summary",
        branch_type="subagent",
        branch_id="b",
        agent_name="a",
        usage={"input_tokens": 1},
        created_at=5.0,
        metadata={"k": 1},
    )
    assert all(
        getattr(sample, f.name) != f.default
        for f in fields(NewMessage)
        if f.name not in ("tool_calls", "token_count")
    )
    with store.write() as w:
        b = TraceBuilder(w, ImportContext(), "openai", "x")
        seq = b.add(sample, None)
        b.flush()
        trace_id = b.trace_id
    expected = TokenCounter().count_message("assistant", "text", (), "n").tokens
    m = t.messages.c
    stored = select(m.token_count).where(m.trace_id == trace_id, m.sequence == seq)
    with store.read() as r:
        assert r.conn.execute(stored).scalar_one() == PENDING_TOKENS
        read = r.message(trace_id, seq)
    assert read.token_count == expected
    assert fill_pending(store, [trace_id]) == 1
    with store.read() as r:
        assert r.conn.execute(stored).scalar_one() == expected
        again = r.message(trace_id, seq)
    assert again == read
    assert fill_pending(store, [trace_id]) == 0
    assert {
        f.name: getattr(read, f.name) for f in fields(NewMessage) if f.name != "token_count"
    } == {f.name: getattr(sample, f.name) for f in fields(NewMessage) if f.name != "token_count"}


def test_reimport_found_before_the_commit_when_the_size_was_not_known(store: Store) -> None:
    """A unit of a size never imported is hashed beside the import; if its content turns
    out to be in the store (imported meanwhile), the import is rolled back."""
    from sqlalchemy import func, update

    src = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"
    (first,) = import_paths(store, [src])
    with store.read() as r:
        assert r.may_be_imported(src.stat().st_size)
        assert not r.may_be_imported(src.stat().st_size + 1)
        traces = len(r.traces())
    with store.write() as w:  # as if the first import had been of another size
        w.conn.execute(update(t.import_records).values(bytes=1))
    (again,) = import_paths(store, [src])
    assert again.duplicate and again.trace_id == first.trace_id
    with store.read() as r:
        assert len(r.traces()) == traces, "the second import was rolled back"
        n = r.conn.execute(select(func.count()).select_from(t.import_records)).scalar_one()
    assert n == 1


def test_records_of_unknown_size_keep_the_hash_first(store: Store) -> None:
    from sqlalchemy import update

    src = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"
    import_paths(store, [src])
    with store.write() as w:  # rows written before import sizes were kept
        w.conn.execute(update(t.import_records).values(bytes=None))
    with store.read() as r:
        assert r.may_be_imported(12345)
    (again,) = import_paths(store, [src])
    assert again.duplicate


def test_search_finds_tools_in_imported_calls(store: Store) -> None:
    """Imports write tool calls with orjson (``"name":"Read"``); search finds them as it
    finds those a run writes (``"name": "Read"``), and the results that name the tool."""
    import json

    src = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"
    calls = [
        b["name"]
        for line in src.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for rec in [json.loads(line)]
        if rec.get("type") == "assistant" and isinstance(rec["message"]["content"], list)
        for b in rec["message"]["content"]
        if b.get("type") == "tool_use"
    ]
    assert calls
    (res,) = import_paths(store, [src])
    with store.read() as r:
        for name in calls:
            found = [r.message(res.trace_id, s) for s in r.search(res.trace_id, tool_name=name)]
            assert any(c.name == name for m in found for c in m.tool_calls), name
            assert all(m.name == name or any(c.name == name for c in m.tool_calls) for m in found)
