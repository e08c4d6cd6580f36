"""PREPARE: deferred grants, notices and nudges (INJ-5), caller skill (re-)injection
(INJ-3), compaction when over the threshold."""

from __future__ import annotations

from core.refs import (
    ContextLoad,
)
from core.run.compacting import CompactionSteps
from core.run.state import Phase, StepResult
from core.store.writer import Writer


class PrepareSteps(CompactionSteps):
    # -- PREPARE --------------------------------------------------------------------------
    async def _prepare(self) -> StepResult:
        written: list[int] = []
        self.view()
        if self.lane.main_duties:
            self.turn.prepared_from = self._prepare_point()
        pre = self.monitors.before_model_call(self.budget_tokens(), self.turn.last_step)
        self.turn.last_step = None  # counted once, even if this phase runs again (rewind, resume)
        self.turn.final_only = self.turn.final_only or pre.final_answer_without_tools
        if self.turn.steps >= self.config.max_steps - 1:  # the last allowed call answers
            self.turn.final_only = True
        with self.store.write() as w:
            written += self._retry_deferred_grants(w)
            if pre.nudges:
                msgs = self._append(w, [n.to_message(goal_id=self.goals.focus) for n in pre.nudges])
                written += [m.sequence for m in msgs]
                for n in pre.nudges:
                    self._emit("nudge", {"name": n.name, "text": n.text}, msgs[0].sequence)
        event = await self._maybe_compact(manual=self.turn.manual_compact)
        self.turn.manual_compact = False
        written += self._inject_caller_skills()  # after compaction: the call carries them
        self.turn.phase = Phase.MODEL
        detail = f"compaction {event.level}" if event is not None else ""
        return StepResult(Phase.PREPARE, Phase.MODEL, tuple(written), detail)

    def _retry_deferred_grants(self, w: Writer) -> list[int]:
        """The context budget (REF-4) counts per round: each round starts fresh and grants
        deferred in the last one are tried again (granted, deferred again, or refused)."""
        written: list[int] = []
        for request in self.ledger.start_turn():
            w.flush()
            self._make_room_for_images(w, request.ref_id)
            view = self._view_in(w)
            parent = self.lane.parent()
            _plan, grant = self.ledger.grant_now(
                w,
                self.trace_id,
                request,
                ContextLoad.of_view(view),
                parent=parent,
                agent_name=self.agent_name,
                retried=True,
            )
            if grant is not None and grant.message_sequence is not None:
                self._moved(grant.message_sequence)
                written.append(grant.message_sequence)
                self._emit(
                    "grant",
                    {"ref": grant.ref_id, "cost": grant.cost, "by": request.by, "retried": True},
                    grant.message_sequence,
                )
        return written
