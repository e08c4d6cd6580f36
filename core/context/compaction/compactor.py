"""The compactor: runs levels and layers with the guards, for the run loop and the UI.

- ``maybe_compact(view, budget)``: the automatic trigger at a step point. Over the
  threshold (default 0.5 × window) it runs goal (mode ``on_overflow``), snip, micro,
  summary, aggressive micro, in that order until under the threshold, then identity.
  Guarded (SPEC CMP-6): a recursion guard, the circuit breaker, and a refusal of results
  that reclaim less than ``min_reclaim``; a failed summary also counts as a failure.
- ``compact(view, level)``: manual compaction of one level, or ``auto``; bypasses the
  breaker and resets it on success. ``dry_run=True`` leaves the breaker alone (previews).
- ``on_goal_done(view, goal_id)``: goal compaction right after ``goal(done)`` in mode
  ``on_complete``.
Nothing here writes to the store: an outcome is committed with
``core/context/compaction/persist.py:record_outcome``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.context.compaction.breaker import CircuitBreaker
from core.context.compaction.config import (
    LEVELS,
    CompactionConfig,
    LevelChoice,
    Trigger,
    is_level_choice,
)
from core.context.compaction.files import FileStateCache, restore_files
from core.context.compaction.goal import compact_goals
from core.context.compaction.identity import inject_identity
from core.context.compaction.items import with_items
from core.context.compaction.layers import LAYERS
from core.context.compaction.outcome import CompactionOutcome, Status
from core.context.compaction.result import LayerResult
from core.context.compaction.scan import ContextState
from core.context.compaction.summarizer import Summarizer
from core.context.compaction.summary import SummaryResult, summarize
from core.context.compaction.summary_state import Records
from core.context.view import View
from core.errors import InvalidInputError


@dataclass(frozen=True)
class Budget:
    """The token budget a context is compacted against."""

    window: int = 128_000
    threshold: float = 0.5
    tokens: int | None = None
    """Prompt tokens as the provider last reported them plus estimates since (TOK-2);
    counted from the view when ``None``."""

    @property
    def limit(self) -> int:
        return int(self.window * self.threshold)


@dataclass
class _Run:
    view: View
    layers: list[LayerResult]
    summary: SummaryResult | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


class Compactor:
    def __init__(
        self,
        config: CompactionConfig | None = None,
        summarizer: Summarizer | None = None,
        clock: Callable[[], float] = time.monotonic,
        files: FileStateCache | None = None,
    ) -> None:
        self.config = config or CompactionConfig()
        self.summarizer = summarizer
        self.files = files
        g = self.config.guards
        self.breaker = CircuitBreaker(g.failures_to_open, g.half_open_after_s, clock)
        self.state = ContextState()
        """Per-layer state kept across calls: a grown context costs its new items."""
        self._active = False

    def tokens(self, view: View) -> int:
        """Tokens of ``view`` (from the running sums of its scan)."""
        return self.state.scan(view).tokens

    def budget(self, tokens: int | None = None) -> Budget:
        return Budget(self.config.window, self.config.threshold, tokens)

    # -- entry points ---------------------------------------------------------------------
    async def maybe_compact(
        self, view: View, budget: Budget | None = None, records: Records | None = None
    ) -> CompactionOutcome:
        budget = budget or self.budget()
        tokens = budget.tokens if budget.tokens is not None else self.tokens(view)
        if self._active:
            return self._same(view, "auto", "skipped", "a compaction is already running", tokens)
        if tokens <= budget.limit:
            why = within(tokens, budget.limit)
            return self._same(view, "auto", "not_needed", why, tokens, limit=budget.limit)
        if not self.breaker.allow():
            return self._same(view, "auto", "skipped", "circuit breaker open", tokens)
        # layers measure the view; what the provider counts beyond it (tool schemas, its
        # own tokenizer) stays, so the view must get under the limit minus that offset
        limit = budget.limit - max(0, tokens - self.tokens(view))
        outcome = await self._guarded(view, "auto", records, limit, "auto", tokens)
        if outcome.compacted and not outcome.errors:
            self.breaker.record_success()
        else:
            self.breaker.record_failure()
        return outcome

    async def compact(
        self,
        view: View,
        level: str = "auto",
        records: Records | None = None,
        budget: Budget | None = None,
        dry_run: bool = False,
    ) -> CompactionOutcome:
        """Manual compaction (the ``compress_context`` tool, the UI, the CLI)."""
        if not is_level_choice(level):
            raise InvalidInputError(f"unknown compaction level {level!r}; use one of {LEVELS}")
        tokens = self.tokens(view)
        if self._active:
            return self._same(view, level, "skipped", "a compaction is already running", tokens)
        limit = (budget or self.budget()).limit
        if level == "auto" and tokens <= limit:
            why = within(tokens, limit)
            return self._same(view, level, "not_needed", why, tokens, "manual", limit=limit)
        outcome = await self._guarded(view, level, records, limit, "manual", tokens)
        if not dry_run and outcome.compacted and not outcome.errors:
            self.breaker.reset()
        return outcome

    def on_goal_done(
        self, view: View, goal_id: str, records: Records | None = None
    ) -> CompactionOutcome:
        tokens = self.tokens(view)
        if self.config.goal_mode != "on_complete":
            return self._same(view, "goal", "not_needed", "goal mode is not on_complete", tokens)
        run = _Run(view, [])
        self._apply(run, compact_goals(view, records or _records(view), [goal_id], self.state))
        return self._finish(view, "goal", "on_complete", tokens, run, None)

    # -- the run --------------------------------------------------------------------------
    async def _guarded(
        self,
        view: View,
        level: LevelChoice,
        records: Records | None,
        limit: int,
        trigger: Trigger,
        tokens: int,
    ) -> CompactionOutcome:
        self._active = True
        min_reclaim = self.config.guards.min_reclaim if trigger == "auto" else None
        try:
            run = await self._run(view, level, records or _records(view), limit, min_reclaim)
        finally:
            self._active = False
        return self._finish(view, level, trigger, tokens, run, min_reclaim)

    async def _run(
        self,
        view: View,
        level: LevelChoice,
        records: Records,
        limit: int,
        min_reclaim: float | None = None,
    ) -> _Run:
        """``auto`` applies layers until the context is under ``limit`` *and* has shrunk by
        ``min_reclaim``: stopping just under the limit would make the next call compact
        again by a sliver (a death loop the refusal guard would then have to break)."""
        run = _Run(view, [])
        order = self._order() if level == "auto" else [level]
        start = self.tokens(view)
        goal = limit * self.config.guards.target if min_reclaim is not None else limit
        for name in order:
            now = self.tokens(run.view)
            shrunk = (start - now) / start if start else 1.0
            if level == "auto" and now <= goal and shrunk >= (min_reclaim or 0.0):
                break
            if name == "goal" and level == "auto":
                self._goals_one_by_one(run, records, goal)
                continue
            await self._layer(run, name, records)
        if self.files is not None and any(r.level in ("snip", "summary") for r in run.layers):
            self._restore(run)
        if level == "auto":
            self._apply(run, inject_identity(run.view, self.config.identity))
        return run

    def _goals_one_by_one(self, run: _Run, records: Records, goal: float) -> None:
        """Seed A's ``on_overflow``: finished goals are compacted oldest first, one at a
        time, until the context is under the target (or none is left)."""
        for gid in records.goals.finished_ids():
            if self.tokens(run.view) <= goal:
                return
            self._apply(run, compact_goals(run.view, records, [gid], self.state))

    def _order(self) -> list[str]:
        skip = {"identity"} | ({"goal"} if self.config.goal_mode == "none" else set())
        return [name for name in LEVELS if name not in skip]

    async def _layer(self, run: _Run, name: str, records: Records) -> None:
        apply = LAYERS[name].apply
        if apply is not None:
            for res in apply(run.view, records, self.config, self.state):
                self._apply(run, res)
        elif self.summarizer is None:
            run.error = "summary: no summarizer configured"
        else:
            run.summary = await summarize(
                run.view, records, self.config.summary, self.summarizer, self.state
            )
            if run.summary.result is None:
                run.error = f"summary: {run.summary.error}"
            else:
                self._apply(run, run.summary.result)

    def _restore(self, run: _Run) -> None:
        assert self.files is not None
        marks = [
            n
            for n, i in enumerate(run.view.items)
            if i.sequence is None and i.kind in ("placeholder", "summary")
        ]
        if marks:
            params = self.config.files
            recent = self.files.recent(params.restore_files)
            self._apply(run, restore_files(run.view, recent, params, marks[-1] + 1))

    @staticmethod
    def _apply(run: _Run, res: LayerResult) -> None:
        if res.changed:
            run.layers.append(res)
            run.view = with_items(run.view, res.items)
        elif res.details and res.details.get("skipped"):
            run.notes.append(f"{res.level}: {res.details['skipped']}")

    # -- outcomes -------------------------------------------------------------------------
    def _finish(
        self,
        view: View,
        level: LevelChoice,
        trigger: Trigger,
        tokens: int,
        run: _Run,
        min_reclaim: float | None,
    ) -> CompactionOutcome:
        errors = (run.error,) if run.error else ()
        after = self.tokens(run.view)
        if not run.layers:
            status: Status = "failed" if errors else "unchanged"
            reason = "; ".join([*errors, *run.notes]) or "no layer changed the context"
            return self._same(view, level, status, reason, tokens, trigger, run, errors)
        before = self.tokens(view)
        reclaimed = (before - after) / before if before else 0.0
        if min_reclaim is not None and reclaimed < min_reclaim:
            reason = (
                f"it would reclaim only {reclaimed:.1%} of {before:,} tokens (an automatic "
                f"compaction must reclaim {min_reclaim:.0%})"
            )
            return self._same(view, level, "refused", reason, tokens, trigger, run, errors)
        return CompactionOutcome(
            "compacted",
            f"{before:,} → {after:,} tokens",
            level,
            view,
            run.view.items,
            before,
            after,
            trigger,
            tuple(run.layers),
            run.summary,
            errors,
        )

    @staticmethod
    def _same(
        view: View,
        level: LevelChoice,
        status: Status,
        reason: str,
        tokens: int,
        trigger: Trigger = "auto",
        run: _Run | None = None,
        errors: tuple[str, ...] = (),
        limit: int | None = None,
    ) -> CompactionOutcome:
        summary = run.summary if run is not None else None
        layers = tuple(run.layers) if run is not None else ()
        return CompactionOutcome(
            status,
            reason,
            level,
            view,
            view.items,
            tokens,
            tokens,
            trigger,
            layers,
            summary,
            errors,
            limit,
        )


def within(tokens: int, limit: int) -> str:
    """Why an automatic compaction is not needed, in the window's words: ``the context's
    5,754 tokens are within the 9,600-token threshold``."""
    return f"the context's {tokens:,} tokens are within the {limit:,}-token threshold"


def _records(view: View) -> Records:
    """Records from the context alone (when the caller has none from the store)."""
    seqs = [i.sequence for i in view.items if i.sequence is not None]
    msgs = [view.messages[s] for s in seqs if s in view.messages]
    return Records.from_messages(msgs)
