"""Assemble a streamed chat completion from its chunks, and parse a plain one.

Tool calls arrive as fragments keyed by ``index`` (parallel calls interleave); the first
fragment of a call carries its id and name, later ones only more argument text. Servers
differ: some repeat the id on every fragment, some omit ``index`` (then the id, or failing
that the last open call, decides). The message is complete only with a finish reason or
``[DONE]``; anything less raises ``stream_cut``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.llm.errors import ErrorKind, ModelCallError
from core.llm.response import (
    ModelResponse,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from core.records import ToolCall


@dataclass
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Collects chunks of one streamed completion (choice 0) into a ``ModelResponse``."""

    def __init__(self, requested_model: str, events: bool = True) -> None:
        self.requested_model = requested_model
        self.events = events
        """Whether ``add`` returns the UI events (off: a caller that only wants the response
        does not pay for an event object per chunk)."""
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._by_id: dict[str, int] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.saw_done = False
        self.first_delta_at: float | None = None

    def add(self, chunk: dict[str, Any], now: float = 0.0) -> list[StreamEvent]:
        """Take one decoded chunk; return the UI events it carries (none if ``events`` is
        off)."""
        get = chunk.get
        self.model = get("model") or self.model
        self.response_id = get("id") or self.response_id
        usage = get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        events: list[StreamEvent] = []
        delta = False
        for choice in get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = self._delta(choice.get("delta") or {}, events) or delta
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        if delta and self.first_delta_at is None:
            self.first_delta_at = now
        return events

    def _delta(self, delta: dict[str, Any], events: list[StreamEvent]) -> bool:
        """Take one delta, its events onto ``events``; whether it carried anything."""
        got = False
        on = self.events
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._reasoning.append(reasoning)
            got = True
            if on:
                events.append(ReasoningDelta(reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._text.append(content)
            got = True
            if on:
                events.append(TextDelta(content))
        for frag in delta.get("tool_calls") or ():
            event = self._tool_fragment(frag)
            got = True
            if on:
                events.append(event)
        return got

    def _tool_fragment(self, frag: dict[str, Any]) -> ToolCallDelta:
        index = self._index_of(frag)
        call = self._calls.setdefault(index, _PartialCall())
        fn = frag.get("function") or {}
        if frag.get("id") and not call.id:
            call.id = str(frag["id"])
            self._by_id[call.id] = index
        name = fn.get("name")
        if name and not call.name:
            call.name = str(name)
        args = fn.get("arguments")
        if args:
            call.arguments.append(args if isinstance(args, str) else _json(args))
        return ToolCallDelta(index, frag.get("id"), name, args if isinstance(args, str) else "")

    def _index_of(self, frag: dict[str, Any]) -> int:
        if isinstance(frag.get("index"), int):
            return int(frag["index"])
        fid = frag.get("id")
        if fid and fid in self._by_id:
            return self._by_id[fid]
        if fid or not self._calls:
            return len(self._calls)
        return max(self._calls)

    def finish(self, latency_ms: float, started: float = 0.0) -> ModelResponse:
        """The complete response; ``stream_cut`` if the stream never said it was done."""
        if self.finish_reason is None and not self.saw_done:
            raise ModelCallError(
                ErrorKind.MODEL_ERROR,
                "stream ended before the message was complete (no finish_reason, no [DONE])",
                detail="stream_cut",
                model=self.requested_model,
            )
        first = None if self.first_delta_at is None else (self.first_delta_at - started) * 1000
        return ModelResponse(
            text="".join(self._text),
            tool_calls=self._tool_calls(),
            usage=self.usage,
            model=self.model or self.requested_model,
            latency_ms=latency_ms,
            finish_reason=self.finish_reason,
            response_id=self.response_id,
            reasoning="".join(self._reasoning),
            first_token_ms=first,
            streamed=True,
        )

    def _tool_calls(self) -> tuple[ToolCall, ...]:
        out = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.name:
                raise ModelCallError(
                    ErrorKind.MODEL_ERROR,
                    f"streamed tool call #{index} has no function name",
                    detail="bad_response",
                    model=self.requested_model,
                )
            args = "".join(call.arguments) or "{}"
            out.append(ToolCall(call.id or f"call_{index}", call.name, args))
        return tuple(out)


def parse_completion(body: Any, requested_model: str, latency_ms: float) -> ModelResponse:
    """A non-streamed ``chat.completion`` body → ``ModelResponse`` (or ``bad_response``)."""
    try:
        choice = body["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelCallError(
            ErrorKind.MODEL_ERROR,
            "response has no choices[0].message",
            detail="bad_response",
            model=requested_model,
        ) from None
    try:
        calls = tuple(ToolCall.from_json(c) for c in message.get("tool_calls") or ())
    except (KeyError, TypeError) as exc:
        raise ModelCallError(
            ErrorKind.MODEL_ERROR,
            f"malformed tool call in response: {exc!r}",
            detail="bad_response",
            model=requested_model,
        ) from None
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    return ModelResponse(
        text=_content_text(message.get("content")),
        tool_calls=calls,
        usage=body.get("usage") if isinstance(body.get("usage"), dict) else None,
        model=str(body.get("model") or requested_model),
        latency_ms=latency_ms,
        finish_reason=choice.get("finish_reason"),
        response_id=body.get("id"),
        reasoning=reasoning if isinstance(reasoning, str) else "",
    )


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
