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


class CompactionSteps(RunnerCore):
    # -- compaction ---------------------------------------------------------------------------
    async def _maybe_compact(
        self, manual: bool = False, level: str = "auto"
    ) -> CompactionEvent | None:
        mode = self.config.compaction
        if mode == "none":
            return None
        view = self.view()
        auto = not manual and level == "auto"
        tokens = self.budget_tokens()
        if auto and tokens <= self.compactor.config.limit:
            return None  # the common case: no records to load, nothing to compute
        if mode == "naive":
            kept = naive_items(view, self.compactor.config.limit)
            if kept is None:
                return None
            return self._record_naive(view, kept)
        head, records = self._records()
        await self.hooks.fire("pre_compact", {"tokens": token_breakdown(view)[0]})
        if not auto:
            outcome = await self.compactor.compact(view, level, records)
        else:
            budget = self.compactor.budget(tokens)
            was = self.compactor.breaker.state
            outcome = await self.compactor.maybe_compact(view, budget, records)
            self._note_breaker(was)
        if not outcome.compacted:
            if outcome.status in ("failed", "refused"):
                self._emit("compaction", {"status": outcome.status, "reason": outcome.reason})
            return None
        return await self._commit_outcome(outcome, head)

    def _records(self) -> tuple[int | None, Records | None]:
        """The head and what a summary must keep (main agent only), with the knowledge
        reflection extracted that no ``knowledge_eval`` has judged yet (seed A)."""
        with self.store.read() as r:
            head = self._head(r)
            if self.agent_name != "main":
                return head, None
            records = load_records(r, self.trace_id, head)
            return head, replace(records, knowledge=pending_knowledge(r, self.trace_id))

    def _note_breaker(self, was: str) -> None:
        """A change of the compaction breaker's state, as a run event and a stored one
        (``run_events`` type ``breaker``): an open breaker is never silent (issue 18)."""
        breaker = self.compactor.breaker
        if breaker.state == was:
            return
        data = {"breaker": breaker.state, "was": was, "failures": breaker.failures}
        self._emit("compaction", data)
        with self.store.write() as w:
            at = self._head(w.read)
            w.add_run_event(self.trace_id, "breaker", at, {"agent": self.agent_name, **data})

    async def _commit_outcome(
        self, outcome: CompactionOutcome, head: int | None
    ) -> CompactionEvent | None:
        try:
            with self.store.write() as w:
                event = self.lane.record_boundary(w, self.trace_id, outcome, head, self.goals.focus)
                items = self._view_in(w)
                revoked = self.ledger.revoke_missing(w, self.trace_id, items.items)
        except ConflictError as exc:
            self._emit("error", {"compaction": str(exc)})
            return None
        self._emit(
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
        await self.hooks.fire("post_compact", {"level": event.level, "id": event.id})
        self._checkpoint("compaction")
        return event

    def _record_naive(self, view: View, kept: tuple[ContextItem, ...]) -> CompactionEvent:
        kept_seqs = {i.sequence for i in kept}
        removed = tuple(
            i.sequence for i in view.items if i.sequence is not None and i.sequence not in kept_seqs
        )
        before, _ = token_breakdown(view)
        after, _ = token_breakdown(View(kept, view.messages))
        with self.store.write() as w:
            at = self._tip_or_head(w)
            event = w.record_compaction(
                CompactionEvent.between(
                    self.trace_id, "naive", at, view.items, kept, (before, after), removed=removed
                )
            )
        self._emit(
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

    def _inject_caller_skills(self) -> list[int]:
        """Caller skills (INJ-3) missing from the context, (re-)injected right before the
        model call: after this step's compaction, so no call goes out without them."""
        written: list[int] = []
        if not self.config.inject_skills:
            return written
        self.view()
        with self.store.write() as w:
            w.flush()
            needs = pending_skill_injections(
                w.read,
                self.trace_id,
                list(self.config.inject_skills),
                self.config.skill_recency_threshold,
                items=self.cache.items,
            )
            records = apply_skill_needs(
                w,
                self.trace_id,
                self.skills,
                needs,
                parent=self.lane.parent(),
                agent_name=self.agent_name,
                goal_id=self.goals.focus,
                branch_type=self.branch_type,
                branch_id=self.branch_id,
            )
            for rec, need in zip(records, needs, strict=True):
                self._moved(rec.message_sequence)
                written += [rec.call_sequence or rec.message_sequence, rec.message_sequence]
                self._emit(
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

    async def compact_now(self, level: str = "auto") -> CompactionEvent | None:
        """Manual compaction from the UI or CLI: bypasses and resets the breaker."""
        return await self._maybe_compact(manual=True, level=level)


def _stages(outcome: CompactionOutcome) -> list[str]:
    """The side branches of the summary this compaction wrote (none without one)."""
    summary = outcome.summary
    return [st.stage for st in summary.stages] if summary and summary.result else []
