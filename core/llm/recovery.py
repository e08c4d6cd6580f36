"""The recovery ladder for context errors (SPEC LLM-3, seed B 5.2).

When a call fails because the context is too large (prompt too long, token exhausted) the
run loop climbs five steps, each at most once: aggressive compaction, summary compaction,
raising the hard limit, multi-turn recovery, and finally surfacing the error. The actions
belong to the run loop (they change its context and budget) and are passed in as
callbacks; the ladder only decides the order and guarantees each runs once. Every other
error kind goes straight to ``surface``.

``call_with_recovery`` combines the ladder with the retry fast path and enforces the rule
that a request which failed as too long is never sent again unchanged.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar, Unpack

from core.canonical import canonical_sha256
from core.llm.errors import CONTEXT_ERRORS, ModelCallError, UnchangedResendError
from core.llm.retry import RetryArgs, call_with_retries

T = TypeVar("T")


class RecoveryStep(StrEnum):
    AGGRESSIVE_COMPACT = "aggressive_compact"
    SUMMARY_COMPACT = "summary_compact"
    RAISE_HARD_LIMIT = "raise_hard_limit"
    MULTI_TURN = "multi_turn"
    SURFACE = "surface"


LADDER = (
    RecoveryStep.AGGRESSIVE_COMPACT,
    RecoveryStep.SUMMARY_COMPACT,
    RecoveryStep.RAISE_HARD_LIMIT,
    RecoveryStep.MULTI_TURN,
)

RecoveryAction = Callable[[ModelCallError], Awaitable[bool]]
"""Does one recovery step; returns whether it changed anything (False = nothing to do)."""


@dataclass(frozen=True)
class RecoveryActions:
    """The run loop's implementations of the ladder's steps (a missing one is skipped)."""

    aggressive_compact: RecoveryAction | None = None
    """snip + micro keeping 2 recent tool results (seed B: AggressiveCompact)."""
    summary_compact: RecoveryAction | None = None
    """LLM summary compaction (ReactiveCompact)."""
    raise_hard_limit: RecoveryAction | None = None
    """Raise the token hard limit (seed B: to 64,000) (EscalateTokens)."""
    multi_turn: RecoveryAction | None = None
    """Inject a message asking the model to continue in smaller steps (MultiTurn)."""

    def get(self, step: RecoveryStep) -> RecoveryAction | None:
        value: RecoveryAction | None = getattr(self, step.value, None)
        return value


@dataclass(frozen=True)
class LadderEntry:
    step: RecoveryStep
    changed: bool
    error_kind: str


@dataclass
class RecoveryLadder:
    """State of one ladder: which steps ran. Use a fresh one per model-call episode."""

    actions: RecoveryActions
    history: list[LadderEntry] = field(default_factory=list)

    @property
    def attempted(self) -> tuple[RecoveryStep, ...]:
        return tuple(e.step for e in self.history)

    def next_step(self, error: ModelCallError) -> RecoveryStep:
        """The step ``recover`` would try next (without running it)."""
        if error.kind not in CONTEXT_ERRORS:
            return RecoveryStep.SURFACE
        done = set(self.attempted)
        for step in LADDER:
            if step not in done and self.actions.get(step) is not None:
                return step
        return RecoveryStep.SURFACE

    async def recover(self, error: ModelCallError) -> RecoveryStep:
        """Run the next untried steps until one changes something; that step is returned.

        Steps whose action is missing are skipped; a step whose action reports no change
        counts as tried and the next one runs. ``SURFACE`` means: give up, show the error.
        """
        while True:
            step = self.next_step(error)
            if step is RecoveryStep.SURFACE:
                self.history.append(LadderEntry(step, False, error.kind.value))
                return step
            action = self.actions.get(step)
            assert action is not None
            changed = bool(await action(error))
            self.history.append(LadderEntry(step, changed, error.kind.value))
            if changed:
                return step


def fingerprint(messages: Sequence[Mapping[str, Any]]) -> str:
    """Identity of a request's messages (canonical JSON), for the no-unchanged-resend rule."""
    return canonical_sha256(list(messages))


Prepare = Callable[[], Awaitable[Sequence[Mapping[str, Any]]]]
Send = Callable[[Sequence[Mapping[str, Any]], str], Awaitable[T]]


async def call_with_recovery(
    prepare: Prepare,
    send: Send[T],
    *,
    actions: RecoveryActions,
    on_recovery: Callable[[LadderEntry], None] | None = None,
    request_extra: Callable[[], Any] | None = None,
    **retry: Unpack[RetryArgs],
) -> T:
    """One model call with both recovery paths.

    ``prepare()`` builds the messages (called again after each ladder step, so it sees the
    compacted context); ``send(messages, model)`` makes one attempt (e.g.
    ``client.complete``). Rate limits and overloads go through ``call_with_retries``;
    context errors climb the ladder; a prepared request identical to one that already
    failed as too long is not sent — the ladder moves on instead. When the ladder reaches
    ``surface`` the last context error is raised. ``request_extra()``: what else the
    request carries (e.g. its output limit), so a step that raises it is a change.
    ``retry``: the model, fallback, policy, clock, cancel event, ``on_retry`` and jitter
    key, passed to ``call_with_retries`` as they are.
    """
    ladder = RecoveryLadder(actions)
    guard = ResendGuard()
    last: ModelCallError | None = None
    while True:
        messages = await prepare()
        extra = request_extra() if request_extra is not None else None
        if guard.is_unchanged(messages, extra):
            assert last is not None
            if await _climb(ladder, last, on_recovery) is RecoveryStep.SURFACE:
                raise last
            continue
        try:
            return await call_with_retries(functools.partial(_send_to, send, messages), **retry)
        except ModelCallError as err:
            if err.kind not in CONTEXT_ERRORS:
                raise
            guard.failed(messages, extra)
            last = err
            if await _climb(ladder, err, on_recovery) is RecoveryStep.SURFACE:
                raise


async def _climb(
    ladder: RecoveryLadder,
    error: ModelCallError,
    on_recovery: Callable[[LadderEntry], None] | None,
) -> RecoveryStep:
    before = len(ladder.history)
    step = await ladder.recover(error)
    if on_recovery is not None:
        for entry in ladder.history[before:]:
            on_recovery(entry)
    return step


def _send_to(send: Send[T], messages: Sequence[Mapping[str, Any]], model: str) -> Awaitable[T]:
    return send(messages, model)


def _key(messages: Sequence[Mapping[str, Any]], extra: Any) -> str:
    return fingerprint(messages) + (f":{json.dumps(extra, sort_keys=True)}" if extra else "")


class ResendGuard:
    """Remembers requests that failed as too long, so none is sent again unchanged."""

    def __init__(self) -> None:
        self._failed: set[str] = set()

    def failed(self, messages: Sequence[Mapping[str, Any]], extra: Any = None) -> None:
        self._failed.add(_key(messages, extra))

    def is_unchanged(self, messages: Sequence[Mapping[str, Any]], extra: Any = None) -> bool:
        # no failure yet (the normal case): nothing to compare, no fingerprint to compute
        return bool(self._failed) and _key(messages, extra) in self._failed

    def check(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Raise ``UnchangedResendError`` if this exact request already failed as too long."""
        if self.is_unchanged(messages):
            raise UnchangedResendError(
                "refusing to resend, unchanged, a request that already failed as too long"
            )
