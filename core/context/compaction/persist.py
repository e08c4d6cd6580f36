"""Committing a compaction to the store (SPEC CMP-8): a boundary, never a rewrite.

A deterministic level records one ``CompactionEvent`` anchored at the head; its
``context_after`` is the new item list, so ``core/context/view.py:current_items`` yields the
compacted context from then on. A summary also writes its side branches (one per stage of
the queue, ``branch_type`` = the stage: the ask and the answer) and appends the summary to
the main path as a message of kind ``summary``; the boundary is anchored at that message,
so rewinding before it detaches the summary and brings the originals back (STORE-4).
"""

from __future__ import annotations

import uuid
from typing import Any

from core.context.compaction.outcome import CompactionOutcome
from core.errors import ConflictError, InvalidInputError
from core.records import CompactionEvent, ContextItem, NewMessage
from core.store.writer import Writer


def record_outcome(
    w: Writer,
    trace_id: str,
    outcome: CompactionOutcome,
    expected_head: Any = ...,
    focus: str | None = None,
) -> CompactionEvent:
    """Record a compacted outcome; ``expected_head`` guards against a head that moved
    since the outcome was computed (the summarizer may have taken a while). ``focus`` is
    the goal in focus, recorded on the summary message like on every message."""
    if not outcome.compacted:
        raise InvalidInputError(f"nothing to record: the compaction was {outcome.status}")
    head = w.read.trace(trace_id).head
    if expected_head is not ... and head != expected_head:
        raise ConflictError(
            f"trace {trace_id}: head moved from {expected_head} to {head} during compaction"
        )
    items = list(outcome.items)
    at, summary_seq = head, None
    pos = next((n for n, i in enumerate(items) if _is_new_summary(i)), None)
    if pos is not None:
        summary_seq = _write_summary(w, trace_id, outcome, items[pos], head, focus)
        items[pos] = ContextItem(summary_seq)
        at = summary_seq
    event = CompactionEvent.between(
        trace_id,
        outcome.applied_level,
        at,
        outcome.before.items,
        items,
        (outcome.tokens_before, outcome.tokens_after),
        removed=outcome.removed,
        trigger=outcome.trigger,
        summary_sequence=summary_seq,
        goal_id=_goal_of(outcome),
        details=_details(outcome),
    )
    return w.record_compaction(event)


def _is_new_summary(item: ContextItem) -> bool:
    return item.sequence is None and item.kind == "summary"


def _write_summary(
    w: Writer,
    trace_id: str,
    outcome: CompactionOutcome,
    item: ContextItem,
    head: int | None,
    focus: str | None,
) -> int:
    removed = outcome.removed
    span = [min(removed), max(removed)] if removed else None
    stages = outcome.summary.stages if outcome.summary is not None else ()
    for st in stages:
        bid = f"{st.stage}-{uuid.uuid4().hex[:12]}"
        meta = {"stage": st.stage, "summarizes": span}
        w.append(
            trace_id,
            [
                NewMessage(
                    "user", st.request.ask(), branch_type=st.stage, branch_id=bid, metadata=meta
                ),
                NewMessage("assistant", st.output, branch_type=st.stage, branch_id=bid),
            ],
            parent=head,
        )
    msg = NewMessage(
        "user",
        item.content or "",
        kind="summary",
        goal_id=focus,
        metadata={"compaction": {"summarizes": span, "stages": [s.stage for s in stages]}},
    )
    return w.append(trace_id, [msg], parent=head, move_head=True)[0].sequence


def _goal_of(outcome: CompactionOutcome) -> str | None:
    for layer in outcome.layers:
        goals = (layer.details or {}).get("goals")
        if layer.level == "goal" and goals and len(goals) == 1:
            return str(goals[0])
    return None


def _details(outcome: CompactionOutcome) -> dict[str, Any]:
    out: dict[str, Any] = {
        "requested": outcome.level,
        "layers": [layer.level for layer in outcome.layers],
        "replaced": list(outcome.replaced),
    }
    if outcome.errors:
        out["errors"] = list(outcome.errors)
    for layer in outcome.layers:
        if layer.level == "file_restore":
            out["files"] = (layer.details or {}).get("files", [])
    return out
