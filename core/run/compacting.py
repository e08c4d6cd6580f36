"""Compaction at the runner's step points: automatic (CMP-1..6), the naive baseline,
manual (UI, ``compress_context``), the recovery ladder's compaction steps."""

from __future__ import annotations

from dataclasses import replace

from core.context.compaction import (
    CompactionOutcome,
    Records,
    load_records,
)
from core.context.skill_injection import apply_skill_needs, pending_skill_injections
from core.context.view import View, token_breakdown
from core.errors import ConflictError
from core.records import CompactionEvent, ContextItem
from core.run.base import RunnerCore
from core.run.knowledge import pending_knowledge
from core.run.naive import naive_items


async def maybe_compact(
    rt: RunnerCore, manual: bool = False, level: str = "auto"
) -> CompactionEvent | None:
    """Compact when over the threshold, or now (``manual``: the UI, ``compress_context``,
    a ladder level); bypassing the threshold also bypasses and resets the breaker."""
    mode = rt.config.compaction
    if mode == "none":
        return None
    view = rt.view()
    auto = not manual and level == "auto"
    tokens = rt.budget_tokens()
    if auto and tokens <= rt.compactor.config.limit:
        return None  # the common case: no records to load, nothing to compute
    if mode == "naive":
        kept = naive_items(view, rt.compactor.config.limit)
        if kept is None:
            return None
        return record_naive(rt, view, kept)
    head, records = records_of(rt)
    await rt.hooks.fire("pre_compact", {"tokens": token_breakdown(view)[0]})
    if not auto:
        outcome = await rt.compactor.compact(view, level, records)
    else:
        budget = rt.compactor.budget(tokens)
        was = rt.compactor.breaker.state
        outcome = await rt.compactor.maybe_compact(view, budget, records)
        note_breaker(rt, was)
    if not outcome.compacted:
        if outcome.status in ("failed", "refused"):
            rt.emit("compaction", {"status": outcome.status, "reason": outcome.reason})
        return None
    return await commit_outcome(rt, outcome, head)


def records_of(rt: RunnerCore) -> tuple[int | None, Records | None]:
    """The head and what a summary must keep (main path only), with the knowledge
    reflection extracted that no ``knowledge_eval`` has judged yet (seed A)."""
    with rt.store.read() as r:
        head = rt.head(r)
        if not rt.lane.main_duties:
            return head, None
        records = load_records(r, rt.trace_id, head)
        return head, replace(records, knowledge=pending_knowledge(r, rt.trace_id))


def note_breaker(rt: RunnerCore, was: str) -> None:
    """A change of the compaction breaker's state, as a run event and a stored one
    (``run_events`` type ``breaker``): an open breaker is never silent (issue 18)."""
    breaker = rt.compactor.breaker
    if breaker.state == was:
        return
    data = {"breaker": breaker.state, "was": was, "failures": breaker.failures}
    rt.emit("compaction", data)
    with rt.store.write() as w:
        at = rt.head(w.read)
        w.add_run_event(rt.trace_id, "breaker", at, {"agent": rt.agent_name, **data})


async def commit_outcome(
    rt: RunnerCore, outcome: CompactionOutcome, head: int | None
) -> CompactionEvent | None:
    """Write the boundary (on this lane), revoke grants compacted away, checkpoint."""
    try:
        with rt.store.write() as w:
            event = rt.lane.record_boundary(w, rt.trace_id, outcome, head, rt.goals.focus)
            items = rt.view_in(w)
            revoked = rt.ledger.revoke_missing(w, rt.trace_id, items.items)
    except ConflictError as exc:
        rt.emit("error", {"compaction": str(exc)})
        return None
    rt.emit(
        "compaction",
        {
            "level": event.level,
            "status": outcome.status,
            "tokens_before": event.tokens_before,
            "tokens_after": event.tokens_after,
            "removed": len(event.removed),
            "revoked_grants": len(revoked),
            "stages": _stages(outcome),
        },
        event.at_sequence,
    )
    await rt.hooks.fire("post_compact", {"level": event.level, "id": event.id})
    rt.checkpoint("compaction")
    return event


def record_naive(rt: RunnerCore, view: View, kept: tuple[ContextItem, ...]) -> CompactionEvent:
    kept_seqs = {i.sequence for i in kept}
    removed = tuple(
        i.sequence for i in view.items if i.sequence is not None and i.sequence not in kept_seqs
    )
    before, _ = token_breakdown(view)
    after, _ = token_breakdown(View(kept, view.messages))
    with rt.store.write() as w:
        at = rt.head_in(w)
        event = w.record_compaction(
            CompactionEvent.between(
                rt.trace_id, "naive", at, view.items, kept, (before, after), removed=removed
            )
        )
    rt.emit(
        "compaction",
        {
            "level": "naive",
            "tokens_before": before,
            "tokens_after": after,
            "removed": len(removed),
        },
        at,
    )
    return event


def inject_caller_skills(rt: RunnerCore) -> list[int]:
    """Caller skills (INJ-3) missing from the context, (re-)injected right before the
    model call: after this step's compaction, so no call goes out without them."""
    written: list[int] = []
    if not rt.config.inject_skills:
        return written
    rt.view()
    with rt.store.write() as w:
        w.flush()
        needs = pending_skill_injections(
            w.read,
            rt.trace_id,
            list(rt.config.inject_skills),
            rt.config.skill_recency_threshold,
            items=rt.cache.items,
        )
        records = apply_skill_needs(
            w,
            rt.trace_id,
            rt.skills,
            needs,
            parent=rt.lane.parent(),
            agent_name=rt.agent_name,
            goal_id=rt.goals.focus,
            **rt.lane.labels(),
        )
        for rec, need in zip(records, needs, strict=True):
            rt.lane.moved(rec.message_sequence)
            written += [rec.call_sequence or rec.message_sequence, rec.message_sequence]
            rt.emit(
                "injection",
                {
                    "kind": "skill",
                    "skill": rec.skill,
                    "reason": need.reason,
                    "why": need.why,
                },
                rec.message_sequence,
            )
    return written


def _stages(outcome: CompactionOutcome) -> list[str]:
    """The side branches of the summary this compaction wrote (none without one)."""
    summary = outcome.summary
    return [st.stage for st in summary.stages] if summary and summary.result else []
