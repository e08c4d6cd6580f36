"""PREPARE: deferred grants, notices and nudges (INJ-5), compaction when over the
threshold, then caller skill (re-)injection (INJ-3). Next: MODEL."""

from __future__ import annotations

from core.refs import (
    ContextLoad,
)
from core.run.base import RunnerCore
from core.run.compacting import inject_caller_skills, maybe_compact
from core.run.state import Phase, StepResult
from core.run.turn import TurnState
from core.store.writer import Writer


async def prepare(rt: RunnerCore, turn: TurnState) -> StepResult:
    written: list[int] = []
    rt.view()
    if rt.lane.main_duties:
        turn.prepared_from = rt.prepare_point()
    pre = rt.monitors.before_model_call(rt.budget_tokens(), turn.last_step)
    turn.last_step = None  # counted once, even if this phase runs again (rewind, resume)
    turn.final_only = turn.final_only or pre.final_answer_without_tools
    if turn.steps >= rt.config.max_steps - 1:  # the last allowed call answers
        turn.final_only = True
    with rt.store.write() as w:
        written += retry_deferred_grants(rt, w)
        if pre.nudges:
            msgs = rt.append(w, [n.to_message(goal_id=rt.goals.focus) for n in pre.nudges])
            written += [m.sequence for m in msgs]
            for n in pre.nudges:
                rt.emit("nudge", {"name": n.name, "text": n.text}, msgs[0].sequence)
    event = await maybe_compact(rt, manual=turn.manual_compact)
    turn.manual_compact = False
    written += inject_caller_skills(rt)  # after compaction: the call carries them
    detail = f"compaction {event.level}" if event is not None else ""
    return StepResult(Phase.PREPARE, Phase.MODEL, tuple(written), detail)


def retry_deferred_grants(rt: RunnerCore, w: Writer) -> list[int]:
    """The context budget (REF-4) counts per round: each round starts fresh and grants
    deferred in the last one are tried again (granted, deferred again, or refused)."""
    written: list[int] = []
    for request in rt.ledger.start_turn():
        w.flush()
        rt.make_room_for_images(w, request.ref_id)
        view = rt.view_in(w)
        _plan, grant = rt.ledger.grant_now(
            w,
            rt.trace_id,
            request,
            ContextLoad.of_view(view),
            parent=rt.lane.parent(),
            agent_name=rt.agent_name,
            retried=True,
        )
        if grant is not None and grant.message_sequence is not None:
            rt.lane.moved(grant.message_sequence)
            written.append(grant.message_sequence)
            rt.emit(
                "grant",
                {"ref": grant.ref_id, "cost": grant.cost, "by": request.by, "retried": True},
                grant.message_sequence,
            )
    return written
