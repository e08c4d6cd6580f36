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
from core.run.compacting import CompactionSteps
from core.run.state import Phase, StepResult


class BookkeepingSteps(CompactionSteps):
    # -- BOOKKEEPING -----------------------------------------------------------------------
    async def _bookkeeping(self) -> StepResult:
        written: list[int] = []
        names = [c.name for c in self.turn.round_calls]
        with self.store.write() as w:
            if self.turn.image_grants:
                msgs = self._append(w, self.turn.image_grants)
                written += [m.sequence for m in msgs]
                self.turn.image_grants = []
            if self.turn.round_calls and self.lane.main_duties:
                decision = periodic_decision(
                    self.iteration,
                    interval=self.config.injection_interval,
                    branch_type=self.branch_type,
                    round_tool_names=names,
                )
                if decision.inject:
                    msgs = inject_context(
                        w,
                        self.trace_id,
                        self._sources(),
                        self.iteration,
                        agent_name=self.agent_name,
                        goal_id=self.goals.focus,
                    )
                    written += [m.sequence for m in msgs]
                    sources = re.findall(r"^## (.+)$", msgs[-1].content, re.M)
                    self._emit(
                        "injection",
                        {"kind": "context", "reason": decision.reason, "sources": sources},
                        msgs[-1].sequence,
                    )
        if (
            self.turn.goal_done
            and self.config.goal_mode == "on_complete"
            and (self.config.compaction == "ctxlens")
        ):
            await self._compact_done_goals()
        self.turn.goal_done = []
        await self.hooks.fire("step_complete", {"iteration": self.iteration})
        self.turn.end_round()
        if self.turn.final is not None:
            await self._reflect_on_completion()
            self._end_turn()
            self.turn.phase = Phase.DONE
            self._emit("done", {"final": self.turn.final})
        else:
            self.turn.phase = Phase.PREPARE
            every = self.config.checkpoint_rounds
            if every > 0 and self.iteration % every == 0:
                self._checkpoint("round")
        return StepResult(Phase.BOOKKEEPING, self.turn.phase, tuple(written))

    async def _compact_done_goals(self) -> None:
        """``on_complete``: each goal finished this round is compacted at once (seed A)."""
        for gid in self.turn.goal_done:
            view = self.view()
            head, records = self._records()
            outcome = self.compactor.on_goal_done(view, gid, records)
            if outcome.compacted:
                await self._commit_outcome(outcome, head)

    async def _reflect_on_completion(self) -> None:
        """Seed A: a completed task goes through a ``reflection`` side branch (the ask and
        the answer, off the main path) when ``enable_completion_extraction`` is set."""
        summarizer = self.compactor.summarizer
        if not self.config.enable_completion_extraction or summarizer is None:
            return
        if not self.lane.main_duties:
            return
        self.view()
        request = SummaryRequest(
            "reflection",
            tuple(self.cache.openai()),
            detailed_view(self.goals),
            self.compactor.config.summary.max_narrative_tokens,
        )
        try:
            text = await summarizer.summarize(request)
        except Exception as exc:  # a failed reflection must not lose the finished turn
            self._emit("error", {"reflection": f"{type(exc).__name__}: {exc}"})
            return
        bid = f"reflection-{uuid.uuid4().hex[:12]}"
        with self.store.write() as w:
            head = w.head(self.trace_id)
            msgs = w.append(
                self.trace_id,
                [
                    NewMessage("user", request.ask(), branch_type="reflection", branch_id=bid),
                    NewMessage("assistant", str(text), branch_type="reflection", branch_id=bid),
                ],
                parent=head,
                move_head=False,
            )
        self._emit("state", {"reflection": bid, "knowledge": str(text)[:200]}, msgs[-1].sequence)

    def _end_turn(self) -> None:
        with self.store.write() as w:
            if self.session_id is not None and self.turn_index is not None:
                w.end_turn(self.session_id, self.turn_index)
        self._checkpoint("turn")
        if self.config.trajectory_dir and self.agent_name == "main":
            from core.run.trajectory import export_trajectory

            export_trajectory(self.store, self.trace_id, Path(self.config.trajectory_dir))
