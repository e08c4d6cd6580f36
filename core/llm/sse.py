"""A strict server-sent-events decoder for chat-completion streams.

Lines go in, events come out (an event ends at a blank line). Anything an
OpenAI-compatible server does not send — a field other than ``data``, ``event``, ``id``,
``retry`` — is a ``malformed_stream`` error rather than silently ignored, so a garbled
stream is reported instead of producing a wrong message.
"""

from __future__ import annotations

from typing import NamedTuple

from core.llm.errors import ErrorKind, ModelCallError

_FIELDS = frozenset({"data", "event", "id", "retry"})


class SseEvent(NamedTuple):
    """One event (a tuple: one is made per streamed chunk, a frozen dataclass costs more)."""

    data: str
    event: str | None = None


class SseDecoder:
    """Feed it lines (without their line ending); it returns finished events."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event: str | None = None

    def feed_line(self, line: str) -> SseEvent | None:
        if line.startswith("data: "):  # the common case, first
            self._data.append(line[6:])
            return None
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, sep, value = line.partition(":")
        if not sep or name not in _FIELDS:
            raise ModelCallError(
                ErrorKind.MODEL_ERROR,
                f"malformed SSE line {line[:80]!r}",
                detail="malformed_stream",
            )
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def close(self) -> SseEvent | None:
        """End of input: a pending event without its blank line still counts."""
        return self._dispatch()

    def _dispatch(self) -> SseEvent | None:
        data = self._data
        if not data:
            self._event = None
            return None
        event = SseEvent(data[0] if len(data) == 1 else "\n".join(data), self._event)
        data.clear()
        self._event = None
        return event
