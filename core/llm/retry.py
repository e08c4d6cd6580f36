"""Retries for rate limits and overloads (SPEC LLM-4, seed B 5.3).

``call_with_retries`` runs one model call and, on a 429 or 529, waits and tries again:
``min(base·2^n, cap)`` ms plus a deterministic jitter, or the server's ``Retry-After``
(capped), at most ``max_tries`` tries in all; after ``fallback_after`` consecutive overloads
it switches to the fallback model and tries again at once. Anything else — a 400 prompt too
long above all — is raised on the first occurrence, never resent. Waiting goes through an
injectable clock and stops at once when the cancel event is set.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Required, TypedDict, TypeVar

from core.llm.cancel import race_cancel
from core.llm.clock import Clock, RealClock
from core.llm.errors import ErrorKind, ModelCallError, RetriesExhausted

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """Numbers of the 429/529 fast path; the defaults are seed B's."""

    max_tries: int = 10
    base_ms: float = 500.0
    cap_ms: float = 32_000.0
    jitter_ratio: float = 0.25
    """Jitter is in ``[0, jitter_ratio × delay)``, fixed by ``seed`` and the try number."""
    retry_after_cap_ms: float = 60_000.0
    fallback_after: int = 3
    seed: str = "ctxlens"
    retry_kinds: frozenset[ErrorKind] = field(
        default=frozenset({ErrorKind.RATE_LIMITED, ErrorKind.OVERLOADED})
    )

    def __post_init__(self) -> None:
        if self.max_tries < 1:
            raise ValueError(f"RetryPolicy.max_tries must be >= 1, got {self.max_tries}")


DEFAULT_POLICY = RetryPolicy()


def jitter_fraction(seed: str, attempt: int) -> float:
    """A number in [0, 1) fixed by ``seed`` and ``attempt``: first 8 bytes of sha256."""
    digest = hashlib.sha256(f"{seed}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def backoff_ms(attempt: int, policy: RetryPolicy = DEFAULT_POLICY, key: str = "") -> float:
    """Wait after failed try ``attempt`` (0-based): ``min(base·2^n, cap)`` + jitter."""
    base = min(policy.base_ms * float(2**attempt), policy.cap_ms)
    seed = f"{policy.seed}:{key}" if key else policy.seed
    return base + base * policy.jitter_ratio * jitter_fraction(seed, attempt)


def wait_ms(error: ModelCallError, attempt: int, policy: RetryPolicy, key: str = "") -> float:
    """The wait before the next try: Retry-After when the server sent one (capped)."""
    if error.retry_after is not None:
        return min(error.retry_after * 1000.0, policy.retry_after_cap_ms)
    return backoff_ms(attempt, policy, key)


@dataclass(frozen=True)
class RetryNotice:
    """Told to ``on_retry`` before each wait or model switch (for events and the UI)."""

    attempt: int
    """The try that failed (1 = the first)."""
    error: ModelCallError
    delay_s: float
    model: str
    next_model: str


class RetryArgs(TypedDict, total=False):
    """The keywords of ``call_with_retries`` after ``call``: what a caller that wraps it
    (``core/llm/recovery.py:call_with_recovery``) takes and passes on unchanged."""

    model: Required[str]
    fallback_model: str | None
    policy: RetryPolicy
    clock: Clock | None
    cancel: asyncio.Event | None
    on_retry: Callable[[RetryNotice], None] | None
    jitter_key: str


async def call_with_retries(
    call: Callable[[str], Awaitable[T]],
    *,
    model: str,
    fallback_model: str | None = None,
    policy: RetryPolicy = DEFAULT_POLICY,
    clock: Clock | None = None,
    cancel: asyncio.Event | None = None,
    on_retry: Callable[[RetryNotice], None] | None = None,
    jitter_key: str = "",
) -> T:
    """``await call(model_name)`` with the 429/529 policy; returns its result.

    Raises the first error that is not retryable unchanged, ``RetriesExhausted`` after
    ``policy.max_tries`` tries, ``CallCancelled`` as soon as ``cancel`` is set (also during a
    wait or a call in flight); asyncio cancellation propagates as usual.
    """
    clock = clock or RealClock()
    current, overloads, switched = model, 0, False
    for attempt in range(policy.max_tries):
        try:
            return await race_cancel(call(current), cancel)
        except ModelCallError as err:
            if err.kind not in policy.retry_kinds:
                raise
            if attempt + 1 >= policy.max_tries:
                raise RetriesExhausted(err, attempt + 1) from err
            overloads = overloads + 1 if err.kind == ErrorKind.OVERLOADED else 0
            next_model, delay = current, wait_ms(err, attempt, policy, jitter_key) / 1000.0
            if fallback_model and not switched and overloads >= policy.fallback_after:
                next_model, delay, switched, overloads = fallback_model, 0.0, True, 0
            if on_retry is not None:
                on_retry(RetryNotice(attempt + 1, err, delay, current, next_model))
            if delay > 0:
                await race_cancel(clock.sleep(delay), cancel)
            current = next_model
    raise AssertionError("unreachable: the loop returns or raises")
