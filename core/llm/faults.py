"""The local server's fault switchboard: make the next request(s) fail like real providers.

A test queues faults (``server.faults.add(Fault.overloaded(), times=3)``); each request takes
the first queued fault that matches its model, so "529 three times on the primary model,
then OK on the fallback" is one line. Error bodies and status codes are the ones real
providers send (OpenAI, Anthropic, vLLM, llama.cpp), so classification is tested against
real texts, not our own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal

FaultKind = Literal["http_error", "slow", "cut", "malformed", "stream_error", "trickle", "silent"]

OPENAI_RATE_LIMIT = (
    "Rate limit reached for gpt-4o in organization org-ctxlens on requests per min (RPM): "
    "Limit 3, Used 3, Requested 1. Please try again in 20s. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)
OPENAI_SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"


def openai_context_length(tokens: int, limit: int) -> str:
    return (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )


def prompt_too_long_body(provider: str, tokens: int, limit: int) -> dict[str, Any]:
    """A real 400 body for a prompt over the context window, per provider."""
    if provider == "anthropic":
        return {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {tokens} tokens > {limit} maximum",
            },
        }
    if provider == "vllm":
        return {
            "object": "error",
            "message": (
                f"This model's maximum context length is {limit} tokens. However, you "
                f"requested {tokens + 1000} tokens ({tokens} in the messages, 1000 in the "
                "completion). Please reduce the length of the messages or completion."
            ),
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    if provider == "llamacpp":
        return {
            "error": {
                "code": 400,
                "message": (
                    "the request exceeds the available context size. try increasing the "
                    "context size or enable context shift"
                ),
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": limit,
            }
        }
    return {
        "error": {
            "message": openai_context_length(tokens, limit),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


@dataclass(frozen=True)
class Fault:
    """One way for a request to fail. Build with the named constructors."""

    kind: FaultKind
    status: int = 200
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    during: Literal["headers", "stream"] = "headers"
    after_chunks: int = 2
    clean: bool = False

    @staticmethod
    def http_error(status: int, body: Any, headers: dict[str, str] | None = None) -> Fault:
        return Fault("http_error", status, body, tuple((headers or {}).items()))

    @staticmethod
    def rate_limited(retry_after: float | None = None) -> Fault:
        """429 as OpenAI sends it, with or without a ``Retry-After`` header (seconds)."""
        headers = {} if retry_after is None else {"retry-after": _num(retry_after)}
        body = {
            "error": {
                "message": OPENAI_RATE_LIMIT,
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        }
        return Fault.http_error(429, body, headers)

    @staticmethod
    def overloaded() -> Fault:
        """529 as Anthropic sends it."""
        body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return Fault.http_error(529, body)

    @staticmethod
    def server_error() -> Fault:
        body = {
            "error": {
                "message": OPENAI_SERVER_ERROR,
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        return Fault.http_error(500, body)

    @staticmethod
    def prompt_too_long(
        provider: str = "openai", tokens: int = 130_532, limit: int = 128_000
    ) -> Fault:
        """400 "prompt too long" with the provider's real text."""
        return Fault.http_error(400, prompt_too_long_body(provider, tokens, limit))

    @staticmethod
    def slow(seconds: float, during: Literal["headers", "stream"] = "headers") -> Fault:
        """Wait before the response (``headers``) or after the first SSE event (``stream``)."""
        return Fault("slow", delay_s=seconds, during=during)

    @staticmethod
    def cut_stream(after_chunks: int = 2, clean: bool = False) -> Fault:
        """Stop after some SSE events: drop the connection, or (``clean``) end the body
        properly but without the finish chunk and ``[DONE]``. A plain (non-streamed)
        response is cut halfway through its body."""
        return Fault("cut", after_chunks=after_chunks, clean=clean)

    @staticmethod
    def stream_error(body: Any = None, after_chunks: int = 2) -> Fault:
        """HTTP 200, then an ``event: error`` in the middle of the stream, as Anthropic sends
        when it overloads mid-answer (default body: its ``overloaded_error``)."""
        if body is None:
            body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return Fault("stream_error", body=body, after_chunks=after_chunks)

    @staticmethod
    def trickle(every_s: float = 1.0, for_s: float = 3600.0) -> Fault:
        """HTTP 200, then an SSE comment (``: keep-alive``) every ``every_s`` seconds for
        ``for_s`` seconds and never a reply: no read timeout ever trips (a plain request
        gets one space of its JSON body at a time)."""
        return Fault("trickle", delay_s=for_s, after_chunks=0, body=every_s)

    @staticmethod
    def silent(for_s: float = 3600.0) -> Fault:
        """Accept the request and send nothing at all (no status line) for ``for_s``."""
        return Fault("silent", delay_s=for_s)

    @staticmethod
    def malformed_sse(after_chunks: int = 1) -> Fault:
        """One SSE event whose data is not JSON (a plain response: a truncated JSON body)."""
        return Fault("malformed", after_chunks=after_chunks)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass
class _Entry:
    fault: Fault
    times: int
    model: str | None


class FaultBoard:
    """Queued faults, thread-safe (tests queue from their thread, the server takes)."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault, *, times: int = 1, model: str | None = None) -> None:
        """Queue ``fault`` for the next ``times`` requests (for ``model`` only, if given)."""
        with self._lock:
            self._entries.append(_Entry(fault, times, model))

    def take(self, model: str) -> Fault | None:
        with self._lock:
            for entry in self._entries:
                if entry.model is None or entry.model == model:
                    entry.times -= 1
                    if entry.times <= 0:
                        self._entries.remove(entry)
                    return entry.fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return sum(e.times for e in self._entries)
