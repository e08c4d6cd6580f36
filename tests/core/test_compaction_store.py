"""Dry run and apply on a real store (CMP-8, STORE-4): boundaries, side branches, rewind."""

from __future__ import annotations

import asyncio
import json

import pytest

from bench.histories import History
from core.context.compaction import (
    CompactionConfig,
    Compactor,
    ScriptedSummarizer,
    SummaryParams,
    apply_preview,
    apply_sync,
    dry_run,
    load_records,
    preview,
    record_outcome,
    validity_problems,
)
from core.context.compaction.persist import record_outcome as record
from core.context.view import current_items, current_view
from core.errors import ConflictError
from core.records import ContextRef, NewMessage
from core.store import Store

BODY = "line of output that nobody needs to see again\n" * 20


def _trace(store: Store) -> str:
    h = History()
    h.system()
    h.user("Summarize the incident.", constraints=["Quote log ids verbatim"])
    h.goal(add=["Collect logs", "Write the summary"])
    for k in range(20):
        h.calls([("read_file", {"path": f"/var/log/app{k}.log"}, f"log-{k:04d}\n" + BODY)])
    h.goal(done="1", summary="logs collected")
    h.goal(focus="2")
    h.assistant("Logs are collected; writing now.")
    return h.store_into(store)


def _counts(store: Store, tid: str) -> tuple[int, int]:
    with store.read() as r:
        return r.trace(tid).messages, len(r.compactions(tid))


def test_dry_run_writes_nothing(store: Store) -> None:
    tid = _trace(store)
    before = _counts(store, tid)
    for level in ("goal", "micro", "summary", "auto"):
        pv = dry_run(store, tid, level, config=CompactionConfig(window=1000))
        assert pv.outcome.compacted and not pv.applied
    assert _counts(store, tid) == before


def test_apply_micro_records_a_boundary_the_view_then_follows(store: Store) -> None:
    tid = _trace(store)
    pv = apply_sync(store, tid, "micro")
    assert pv.applied and pv.event is not None and pv.event.level == "micro"
    with store.read() as r:
        view = current_view(r, tid)
        head = r.trace(tid).head
    assert view.boundary is not None and view.boundary.at_sequence == head
    assert view.items == pv.outcome.items
    assert view.openai() == pv.outcome.after.openai()
    assert "[Previous: used read_file]" in json.dumps(view.openai())
    store.append(tid, [NewMessage("user", "next question")])
    with store.read() as r:
        items, _ = current_items(r, tid)
    assert items[:-1] == pv.outcome.items and items[-1].sequence == head + 1  # type: ignore[operator]


def test_apply_summary_writes_side_branches_and_a_summary_message(store: Store) -> None:
    tid = _trace(store)
    cfg = CompactionConfig(summary=SummaryParams(stages=("reflection", "compression")))
    head_before = store.trace(tid).head
    pv = apply_sync(store, tid, "summary", config=cfg)
    assert pv.applied and pv.event is not None
    ev = pv.event
    with store.read() as r:
        summary = r.message(tid, ev.summary_sequence)  # type: ignore[arg-type]
        branches = [m for m in r.all_messages(tid) if m.branch_type is not None]
        view = current_view(r, tid)
        path = r.main_path_sequences(tid)
    assert summary.kind == "summary" and summary.parent_sequence == head_before
    assert ev.at_sequence == summary.sequence == path[-1]
    assert summary.goal_id == "2", "the summary records the goal in focus"
    assert [(m.branch_type, m.role) for m in branches] == [
        ("reflection", "user"),
        ("reflection", "assistant"),
        ("compression", "user"),
        ("compression", "assistant"),
    ]
    assert all(m.parent_sequence in (head_before, m.sequence - 1) for m in branches)
    assert all(m.sequence not in path for m in branches), "side branches stay off the path"
    roles = [m["role"] for m in view.openai()]
    assert roles[:3] == ["system", "user", "user"] and view.items[2].sequence == summary.sequence
    assert "Quote log ids verbatim" in summary.content and "log-0003" in summary.content
    assert validity_problems(view.openai()) == []


def test_rewind_before_the_summary_brings_the_originals_back(store: Store) -> None:
    tid = _trace(store)
    with store.read() as r:
        original = current_view(r, tid).openai()
        head = r.trace(tid).head
    pv = apply_sync(store, tid, "summary")
    assert pv.applied
    store.rewind(tid, head)  # type: ignore[arg-type]
    with store.read() as r:
        view = current_view(r, tid)
    assert view.boundary is None and view.openai() == original


def test_apply_refuses_when_the_head_moved(store: Store) -> None:
    tid = _trace(store)
    with store.read() as r:
        view = current_view(r, tid)
        records = load_records(r, tid)
        head = r.trace(tid).head
    out = asyncio.run(Compactor(summarizer=ScriptedSummarizer()).compact(view, "micro", records))
    store.append(tid, [NewMessage("user", "meanwhile")])
    with pytest.raises(ConflictError, match="head moved"), store.write() as w:
        record_outcome(w, tid, out, expected_head=head)
    assert _counts(store, tid)[1] == 0


class _CountingSummarizer:
    """Writes a different narrative on every call, like a sampled model would."""

    def __init__(self) -> None:
        self.n = 0

    async def summarize(self, request: object) -> str:
        self.n += 1
        return f"Narrative number {self.n}."


def test_apply_preview_records_what_was_previewed(store: Store) -> None:
    tid = _trace(store)
    summarizer = _CountingSummarizer()
    pv = asyncio.run(preview(store, tid, "summary", summarizer=summarizer))
    calls = summarizer.n
    done = apply_preview(store, pv)
    assert summarizer.n == calls, "the summarizer is not asked again"
    assert done.applied and done.event is not None
    with store.read() as r:
        summary = r.message(tid, done.event.summary_sequence)  # type: ignore[arg-type]
    assert f"Narrative number {calls}." in summary.content
    assert apply_preview(store, done) is done, "applying twice records nothing more"
    assert _counts(store, tid)[1] == 1


def test_apply_preview_refuses_a_stale_preview(store: Store) -> None:
    tid = _trace(store)
    pv = dry_run(store, tid, "micro")
    store.append(tid, [NewMessage("user", "meanwhile")])
    with pytest.raises(ConflictError, match="head moved"):
        apply_preview(store, pv)
    assert _counts(store, tid)[1] == 0


def test_records_from_the_store(store: Store) -> None:
    tid = _trace(store)
    with store.read() as r:
        seq = r.main_path_sequences(tid)[5]
    with store.write() as w:
        w.add_ref(ContextRef("ref-7f3a", tid, "tool_output", "big listing", source_sequence=seq))
        w.set_tasks(
            tid,
            seq,
            [
                {"id": "t1", "content": "Draft outline", "status": "completed"},
                {"id": "t2", "content": "Review draft", "status": "pending"},
            ],
        )
    with store.read() as r:
        rec = load_records(r, tid)
    assert rec.ledger == ("ref-7f3a",)
    assert rec.constraints == ("Quote log ids verbatim",)
    assert rec.task == "Summarize the incident."
    assert [g.status for g in rec.goals.goals] == ["completed", "in_progress"]
    assert "Draft outline" in rec.completed_steps() and "Review draft (pending)" in (
        rec.pending_items()
    )
    pv = dry_run(store, tid, "summary")
    assert "ref-7f3a" in (pv.outcome.summary.content or "")  # type: ignore[union-attr]


def test_preview_is_awaitable_inside_a_running_loop(store: Store) -> None:
    tid = _trace(store)

    async def main() -> str:
        pv = await preview(store, tid, "goal")
        return pv.outcome.status

    assert asyncio.run(main()) == "compacted"
    assert record is record_outcome
