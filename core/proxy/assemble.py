"""A response of each API family, streamed or plain, assembled into one assistant message.

The proxy forwards bytes first and feeds them here after; nothing here can break what the
client receives. Chat Completions reuses the runtime's own assembler
(``core/llm/assemble.py``); Responses and Anthropic streams are folded by their event types.
A stream that never said it was done gives ``complete=False`` with what arrived so far.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.json_text import loads_or
from core.llm.assemble import StreamAssembler, parse_completion
from core.llm.errors import ModelCallError
from core.proxy.messages import anthropic_assistant, function_call
from core.records import NewMessage, ToolCall


@dataclass
class Assembled:
    message: NewMessage | None = None
    usage: dict[str, Any] | None = None
    model: str = ""
    response_id: str | None = None
    finish_reason: str | None = None
    complete: bool = False
    error: str | None = None
    """An error the upstream reported inside a 200 stream (an ``error`` event)."""


class Assembly(Protocol):
    def event(self, name: str | None, data: str) -> None: ...

    def body(self, obj: Any) -> None: ...

    def result(self) -> Assembled: ...


def assembly_for(family: str, model: str) -> Assembly:
    if family == "chat":
        return ChatAssembly(model)
    if family == "responses":
        return ResponsesAssembly(model)
    return AnthropicAssembly(model)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# -- Chat Completions --------------------------------------------------------------------


class ChatAssembly:
    def __init__(self, model: str) -> None:
        self._stream = StreamAssembler(model)
        self._plain: Assembled | None = None
        self._error: str | None = None
        self.model = model

    def event(self, name: str | None, data: str) -> None:
        if data.strip() == "[DONE]":
            self._stream.saw_done = True
            return
        chunk = loads_or(data, None)
        if name == "error" or (isinstance(chunk, dict) and "error" in chunk):
            self._error = json.dumps(_dict(chunk).get("error", chunk), ensure_ascii=False)
        elif isinstance(chunk, dict):
            self._stream.add(chunk)

    def body(self, obj: Any) -> None:
        try:
            resp = parse_completion(obj, self.model, 0.0)
        except ModelCallError as exc:
            self._plain = Assembled(model=self.model, error=str(exc))
            return
        self._plain = Assembled(
            resp.to_message(),
            resp.usage,
            resp.model,
            resp.response_id,
            resp.finish_reason,
            complete=True,
        )

    def result(self) -> Assembled:
        if self._plain is not None:
            return self._plain
        s = self._stream
        complete = s.finish_reason is not None or s.saw_done
        s.saw_done = True  # a cut stream still gives what arrived (marked incomplete)
        message: NewMessage | None
        try:
            message = s.finish(0.0).to_message()
        except ModelCallError:  # a tool call whose name never arrived
            message = None
        return Assembled(
            message,
            s.usage,
            s.model or self.model,
            s.response_id,
            s.finish_reason,
            complete and self._error is None,
            self._error,
        )


# -- OpenAI Responses --------------------------------------------------------------------


@dataclass
class _Items:
    text: list[str] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    args: dict[str, list[str]] = field(default_factory=dict)


class ResponsesAssembly:
    """Final state from ``response.completed`` (or ``.incomplete``/``.failed``) when it came;
    otherwise what the deltas said."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._final: dict[str, Any] | None = None
        self._done = False
        self._items = _Items()
        self._meta: dict[str, Any] = {}
        self._error: str | None = None

    def event(self, name: str | None, data: str) -> None:
        obj = _dict(loads_or(data, None))
        kind = str(obj.get("type") or name or "")
        if kind in ("response.created", "response.in_progress"):
            self._meta = _dict(obj.get("response"))
        elif kind == "response.output_text.delta":
            self._items.text.append(str(obj.get("delta", "")))
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self._item(_dict(obj.get("item")))
        elif kind == "response.function_call_arguments.delta":
            self._items.args.setdefault(str(obj.get("item_id", "")), []).append(
                str(obj.get("delta", ""))
            )
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._final = _dict(obj.get("response"))
            self._done = kind == "response.completed"
        elif kind == "error":
            self._error = json.dumps(obj, ensure_ascii=False)

    def _item(self, item: dict[str, Any]) -> None:
        if item.get("type") == "function_call":
            self._items.calls[str(item.get("id") or item.get("call_id"))] = function_call(item)

    def body(self, obj: Any) -> None:
        self._final = _dict(obj)
        self._done = self._final.get("status", "completed") == "completed"

    def result(self) -> Assembled:
        if self._final is not None:
            return self._from_response(self._final)
        calls = tuple(
            ToolCall(c.id, c.name, c.arguments or "".join(self._items.args.get(key, [])))
            for key, c in self._items.calls.items()
        )
        text = "".join(self._items.text)
        message = NewMessage("assistant", text, None, calls) if text or calls else None
        meta = self._meta
        return Assembled(
            message,
            None,
            str(meta.get("model") or self.model),
            meta.get("id"),
            None,
            False,
            self._error,
        )

    def _from_response(self, resp: dict[str, Any]) -> Assembled:
        text: list[str] = []
        calls: list[ToolCall] = []
        parts: list[Any] = []
        for item in resp.get("output") or ():
            item = _dict(item)
            if item.get("type") == "message":
                text.extend(
                    str(p.get("text", ""))
                    for p in item.get("content") or ()
                    if isinstance(p, dict) and p.get("type") == "output_text"
                )
            elif item.get("type") == "function_call":
                calls.append(function_call(item))
            else:
                parts.append(item)
        message = NewMessage("assistant", "".join(text), tuple(parts) or None, tuple(calls))
        usage = resp.get("usage") if isinstance(resp.get("usage"), dict) else None
        status = resp.get("status")
        return Assembled(
            message,
            usage,
            str(resp.get("model") or self.model),
            resp.get("id"),
            str(status) if status else None,
            self._done and self._error is None,
            self._error or _error_text(resp.get("error")),
        )


def _error_text(error: Any) -> str | None:
    return json.dumps(error, ensure_ascii=False) if error else None


# -- Anthropic Messages ------------------------------------------------------------------


class AnthropicAssembly:
    def __init__(self, model: str) -> None:
        self.model = model
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._message: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self._stop: str | None = None
        self._done = False
        self._error: str | None = None

    def event(self, name: str | None, data: str) -> None:
        obj = _dict(loads_or(data, None))
        kind = str(obj.get("type") or name or "")
        index = obj.get("index", 0) if isinstance(obj.get("index"), int) else 0
        if kind == "message_start":
            self._message = _dict(obj.get("message"))
            self._usage.update(_dict(self._message.get("usage")))
        elif kind == "content_block_start":
            self._blocks[index] = dict(_dict(obj.get("content_block")))
        elif kind == "content_block_delta":
            self._delta(index, _dict(obj.get("delta")))
        elif kind == "message_delta":
            self._stop = _dict(obj.get("delta")).get("stop_reason") or self._stop
            self._usage.update(_dict(obj.get("usage")))
        elif kind == "message_stop":
            self._done = True
        elif kind == "error":
            self._error = json.dumps(obj.get("error", obj), ensure_ascii=False)

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))
        elif kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = str(block.get("signature", "")) + str(delta.get("signature", ""))

    def body(self, obj: Any) -> None:
        self._message = _dict(obj)
        content = self._message.get("content")
        self._blocks = dict(enumerate(content if isinstance(content, list) else []))
        self._usage = dict(_dict(self._message.get("usage")))
        self._stop = self._message.get("stop_reason")
        self._done = self._message.get("type") == "message"

    def result(self) -> Assembled:
        blocks = [self._with_input(i, b) for i, b in sorted(self._blocks.items())]
        message = anthropic_assistant(blocks) if blocks or self._done else None
        return Assembled(
            message,
            self._usage or None,
            str(self._message.get("model") or self.model),
            self._message.get("id"),
            self._stop,
            self._done and self._error is None,
            self._error,
        )

    def _with_input(self, index: int, block: dict[str, Any]) -> dict[str, Any]:
        if block.get("type") != "tool_use" or index not in self._json:
            return block
        raw = "".join(self._json[index])
        parsed = loads_or(raw, None) if raw else {}
        return {**block, "input": parsed if isinstance(parsed, dict) else {"_raw": raw}}
