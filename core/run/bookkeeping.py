"""BOOKKEEPING: image grants, periodic context injection (INJ-2), goal compaction in
``on_complete`` mode, end of turn (checkpoint, trajectory export)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from core.context.compaction.summarizer import SummaryRequest
from core.context.periodic import (
    inject_context,
    periodic_decision,
)
from core.goals import detailed_view
from core.records import NewMessage
from core.run.base import RunnerCore
from core.run.compacting import commit_outcome, records_of
from core.run.state import Phase, StepResult
from core.run.turn import TurnState
from core.store.writer import Writer


async def bookkeeping(rt: RunnerCore, turn: TurnState) -> StepResult:
    """BOOKKEEPING: the round's writes, then PREPARE for the next round or DONE."""
    with rt.store.write() as w:
        written = [m.sequence for m in rt.append(w, turn.image_grants)] if turn.image_grants else []
        turn.image_grants = []
        if turn.round_calls and rt.lane.main_duties:
            written += inject_periodic(rt, w, [c.name for c in turn.round_calls])
    if (
        turn.goal_done
        and rt.config.goal_mode == "on_complete"
        and rt.config.compaction == "ctxlens"
    ):
        await compact_done_goals(rt)
    turn.goal_done = []
    await rt.hooks.fire("step_complete", {"iteration": rt.iteration})
    turn.end_round()
    if turn.final is not None:
        await reflect_on_completion(rt)
        end_turn(rt)
        turn.phase = Phase.DONE  # the turn checkpoint said BOOKKEEPING; "done" says DONE
        rt.emit("done", {"final": turn.final})
    else:
        turn.phase = Phase.PREPARE  # the round package records where the run goes on
        every = rt.config.checkpoint_rounds
        if every > 0 and rt.iteration % every == 0:
            rt.checkpoint("round")
    return StepResult(Phase.BOOKKEEPING, turn.phase, tuple(written))


def inject_periodic(rt: RunnerCore, w: Writer, names: list[str]) -> list[int]:
    """``get_current_context`` every ``injection_interval`` model calls (INJ-2)."""
    decision = periodic_decision(
        rt.iteration, interval=rt.config.injection_interval, round_tool_names=names
    )
    if not decision.inject:
        return []
    msgs = inject_context(
        w,
        rt.trace_id,
        rt.periodic_sources(),
        rt.iteration,
        agent_name=rt.agent_name,
        goal_id=rt.goals.focus,
    )
    sources = re.findall(r"^## (.+)$", msgs[-1].content, re.M)
    rt.emit(
        "injection",
        {"kind": "context", "reason": decision.reason, "sources": sources},
        msgs[-1].sequence,
    )
    return [m.sequence for m in msgs]


async def compact_done_goals(rt: RunnerCore) -> None:
    """``on_complete``: each goal finished this round is compacted at once (seed A)."""
    for gid in rt.turn.goal_done:
        view = rt.view()
        head, records = records_of(rt)
        outcome = rt.compactor.on_goal_done(view, gid, records)
        if outcome.compacted:
            await commit_outcome(rt, outcome, head)


async def reflect_on_completion(rt: RunnerCore) -> None:
    """Seed A: a completed task goes through a ``reflection`` side branch (the ask and
    the answer, off the main path) when ``enable_completion_extraction`` is set."""
    summarizer = rt.compactor.summarizer
    if not rt.config.enable_completion_extraction or summarizer is None:
        return
    if not rt.lane.main_duties:
        return
    rt.view()
    request = SummaryRequest(
        "reflection",
        tuple(rt.cache.openai()),
        detailed_view(rt.goals),
        rt.compactor.config.summary.max_narrative_tokens,
    )
    try:
        text = await summarizer.summarize(request)
    except Exception as exc:  # a failed reflection must not lose the finished turn
        rt.emit("error", {"reflection": f"{type(exc).__name__}: {exc}"})
        return
    bid = f"reflection-{uuid.uuid4().hex[:12]}"
    with rt.store.write() as w:
        head = w.head(rt.trace_id)
        msgs = w.append(
            rt.trace_id,
            [
                NewMessage("user", request.ask(), branch_type="reflection", branch_id=bid),
                NewMessage("assistant", str(text), branch_type="reflection", branch_id=bid),
            ],
            parent=head,
            move_head=False,
        )
    rt.emit("state", {"reflection": bid, "knowledge": str(text)[:200]}, msgs[-1].sequence)


def end_turn(rt: RunnerCore) -> None:
    with rt.store.write() as w:
        if rt.session_id is not None and rt.turn_index is not None:
            w.end_turn(rt.session_id, rt.turn_index)
    rt.checkpoint("turn")
    if rt.config.trajectory_dir and rt.lane.main_duties:
        from core.run.trajectory import export_trajectory

        export_trajectory(rt.store, rt.trace_id, Path(rt.config.trajectory_dir))
