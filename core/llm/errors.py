"""Model-call errors and their classification (SPEC LLM-3, seed B 5.1).

Every failure of a model call becomes a ``ModelCallError`` with one ``ErrorKind``. The kind
decides what happens next: rate limits and overloads are retried with backoff
(``core/llm/retry.py``), context errors climb the recovery ladder (``core/llm/recovery.py``),
everything else is surfaced. Classification looks at the HTTP status first, then at keywords
in the provider's error text, because compatible servers disagree on status codes.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from enum import StrEnum

from core.errors import CtxlensError


class ErrorKind(StrEnum):
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    PROMPT_TOO_LONG = "prompt_too_long"
    TOKEN_EXHAUSTED = "token_exhausted"
    TIMEOUT = "timeout"
    MODEL_ERROR = "model_error"


#: Errors caused by the size of the context: they go up the recovery ladder.
CONTEXT_ERRORS = frozenset({ErrorKind.PROMPT_TOO_LONG, ErrorKind.TOKEN_EXHAUSTED})

_STATUS_KINDS = {
    429: ErrorKind.RATE_LIMITED,
    529: ErrorKind.OVERLOADED,
    413: ErrorKind.PROMPT_TOO_LONG,
    408: ErrorKind.TIMEOUT,
    504: ErrorKind.TIMEOUT,
}

#: Keywords of seed B 5.1 plus the texts real servers send (checked in this order).
KEYWORDS: tuple[tuple[ErrorKind, tuple[str, ...]], ...] = (
    (ErrorKind.RATE_LIMITED, ("429", "rate limit", "rate_limit", "too many requests")),
    (ErrorKind.OVERLOADED, ("529", "overloaded", "overload", "service overloaded")),
    (
        ErrorKind.PROMPT_TOO_LONG,
        (
            "prompt_too_long",
            "prompt is too long",
            "context length",
            "context_length",
            "413",
            "context_window_exceeded",
            "input length",
            "exceeds the available context size",
            "context size",
        ),
    ),
    (
        ErrorKind.TOKEN_EXHAUSTED,
        ("max_tokens", "token limit", "token_exhausted", "maximum context length"),
    ),
    (ErrorKind.TIMEOUT, ("timeout", "timed out", "deadline exceeded", "408", "504")),
)


def _keyword_re(word: str) -> re.Pattern[str]:
    # Status numbers only count as whole words ("130429 tokens" is not a 429).
    return re.compile(rf"\b{word}\b" if word.isdigit() else re.escape(word))


_COMPILED = tuple((kind, tuple(_keyword_re(w) for w in words)) for kind, words in KEYWORDS)


def classify(status: int | None, text: str = "") -> ErrorKind:
    """The kind of a failed call from its HTTP status (if any) and error text."""
    if status is not None and status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    low = text.lower()
    for kind, patterns in _COMPILED:
        if any(p.search(low) for p in patterns):
            return kind
    return ErrorKind.MODEL_ERROR


class ModelCallError(CtxlensError):
    """A model call failed. ``kind`` decides retry, ladder or surface.

    ``detail`` names failures that have no HTTP status: ``stream_cut`` (the stream ended
    before the message was complete), ``malformed_stream`` (an SSE event that is not valid
    JSON), ``bad_response``, ``connect_failed``, ``timeout``, ``deadline`` (the whole call
    outlasted ``ModelSettings.deadline_s``). The message is redacted
    before it gets here: it never contains a key.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        detail: str | None = None,
        model: str | None = None,
    ) -> None:
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        """Seconds the server asked us to wait (Retry-After), if it said."""
        self.detail = detail
        self.model = model
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.status is not None:
            where.append(f"HTTP {self.status}")
        if self.detail:
            where.append(self.detail)
        if self.model:
            where.append(f"model {self.model}")
        suffix = f" ({', '.join(where)})" if where else ""
        return f"{self.kind.value}: {self.message}{suffix}"

    def to_json(self) -> dict[str, object]:
        """What the store and the event stream keep of an error."""
        return {
            "kind": self.kind.value,
            "message": self.message,
            "status": self.status,
            "retry_after": self.retry_after,
            "detail": self.detail,
            "model": self.model,
        }


class RetriesExhausted(ModelCallError):
    """Every allowed try failed; carries the last error's kind and the number of tries."""

    def __init__(self, last: ModelCallError, attempts: int) -> None:
        self.last = last
        self.attempts = attempts
        super().__init__(
            last.kind,
            f"gave up after {attempts} tries: {last.message}",
            status=last.status,
            retry_after=last.retry_after,
            detail=last.detail,
            model=last.model,
        )


class CallCancelled(CtxlensError):
    """The caller cancelled the call (its cancel event was set); nothing was returned."""


class UnchangedResendError(CtxlensError):
    """A request that already failed as too long was about to be sent again unchanged."""


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (delta seconds or an HTTP date)."""
    low = {k.lower(): v for k, v in headers.items()}
    raw_ms = low.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = low.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
