"""A request body of each API family as the messages the model received.

One message per conversational turn the way the rest of ctxlens stores them: a system
prompt (Chat ``system``/``developer`` messages, Responses ``instructions``, Anthropic
``system``), user and assistant turns, and one ``tool`` message per tool result (Anthropic
carries several in one user turn; Responses sends each as its own item). Non-text parts
(images, thinking) stay in ``parts`` as they were sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from core.records import NewMessage, ToolCall

FAMILIES = ("chat", "responses", "anthropic")


def family_of(method: str, path: str) -> str | None:
    """Which API a request speaks, from its path; ``None`` = pass through unrecorded."""
    if method != "POST":
        return None
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/messages"):
        return "anthropic"
    return None


def request_messages(family: str, body: dict[str, Any]) -> list[NewMessage]:
    if family == "chat":
        return [m for raw in _list(body.get("messages")) for m in _chat_message(raw)]
    if family == "responses":
        return list(_responses_input(body))
    return list(_anthropic_request(body))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text_of(content: Any, sep: str = "") -> str:
    """The text of string or block content; ``sep`` joins separate blocks (a system prompt
    or user turn sent as several blocks reads as paragraphs; an assistant's streamed text
    parts join as they were produced)."""
    if isinstance(content, str):
        return content
    texts = [str(p.get("text", "")) for p in _list(content) if isinstance(p, dict)]
    return sep.join(t for t in texts if t)


def _extra_parts(content: Any) -> tuple[Any, ...] | None:
    """Parts other than plain text, kept as sent; ``None`` when there are none."""
    if not isinstance(content, list):
        return None
    if all(isinstance(p, dict) and p.get("type") in _TEXT_TYPES for p in content):
        return None
    return tuple(content)


_TEXT_TYPES = ("text", "input_text", "output_text")


def _system(content: Any) -> NewMessage:
    return NewMessage("system", _text_of(content, PARAGRAPH), kind="system_prompt")


PARAGRAPH = "\n\n"


# -- OpenAI Chat Completions ------------------------------------------------------------


def _chat_message(raw: Any) -> Iterator[NewMessage]:
    if not isinstance(raw, dict):
        return
    role = str(raw.get("role", "user"))
    content = raw.get("content")
    if role in ("system", "developer"):
        yield _system(content)
    elif role == "tool":
        yield NewMessage("tool", _text_of(content), tool_call_id=str(raw.get("tool_call_id", "")))
    elif role == "assistant":
        calls = tuple(ToolCall.from_json(c) for c in _list(raw.get("tool_calls")))
        yield NewMessage("assistant", _text_of(content), _extra_parts(content), calls)
    else:
        yield NewMessage("user", _text_of(content, PARAGRAPH), _extra_parts(content))


# -- OpenAI Responses --------------------------------------------------------------------


def _responses_input(body: dict[str, Any]) -> Iterator[NewMessage]:
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        yield _system(body["instructions"])
    items = body.get("input")
    if isinstance(items, str):
        yield NewMessage("user", items)
        return
    turn = _AssistantTurn()
    for item in _list(items):
        if not isinstance(item, dict):
            continue
        if turn.take(item):
            continue
        yield from turn.flush()
        yield from _responses_item(item)
    yield from turn.flush()


def _responses_item(item: dict[str, Any]) -> Iterator[NewMessage]:
    kind = item.get("type", "message")
    if kind == "function_call_output":
        output = item.get("output")
        text = output if isinstance(output, str) else _text_of(output)
        yield NewMessage("tool", text, tool_call_id=str(item.get("call_id", "")))
    elif kind == "message":
        role = str(item.get("role", "user"))
        content = item.get("content")
        if role in ("system", "developer"):
            yield _system(content)
        else:
            yield NewMessage("user", _text_of(content, PARAGRAPH), _extra_parts(content))
    else:  # an item type this reader does not know: kept whole, visibly
        yield NewMessage("user", json.dumps(item, ensure_ascii=False), (item,), kind="meta")


class _AssistantTurn:
    """Consecutive assistant-side Responses items (output message, function calls,
    reasoning) are one assistant turn, as the response that produced them is."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.parts: list[Any] = []

    def take(self, item: dict[str, Any]) -> bool:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "assistant":
            self.text.append(_text_of(item.get("content")))
        elif kind == "function_call":
            self.calls.append(function_call(item))
        elif kind == "reasoning":
            self.parts.append(item)
        else:
            return False
        return True

    def flush(self) -> Iterator[NewMessage]:
        if self.text or self.calls or self.parts:
            parts = tuple(self.parts) or None
            yield NewMessage("assistant", "".join(self.text), parts, tuple(self.calls))
        self.text, self.calls, self.parts = [], [], []


def function_call(item: dict[str, Any]) -> ToolCall:
    args = item.get("arguments", "{}")
    call_id = item.get("call_id") or item.get("id") or ""
    return ToolCall(str(call_id), str(item.get("name", "")), args if isinstance(args, str) else "")


# -- Anthropic Messages ------------------------------------------------------------------


def _anthropic_request(body: dict[str, Any]) -> Iterator[NewMessage]:
    system = body.get("system")
    if system:
        yield _system(system)
    for raw in _list(body.get("messages")):
        if isinstance(raw, dict):
            yield from _anthropic_message(raw)


def _anthropic_message(raw: dict[str, Any]) -> Iterator[NewMessage]:
    content = raw.get("content")
    if raw.get("role") == "assistant":
        yield anthropic_assistant(content if isinstance(content, list) else [_block(content)])
        return
    if isinstance(content, str):
        yield NewMessage("user", content)
        return
    rest: list[Any] = []
    for block in _list(content):
        if isinstance(block, dict) and block.get("type") == "tool_result":
            yield NewMessage(
                "tool",
                _text_of(block.get("content"), PARAGRAPH),
                tool_call_id=str(block.get("tool_use_id", "")),
            )
        else:
            rest.append(block)
    if rest:
        yield NewMessage("user", _text_of(rest, PARAGRAPH), _extra_parts(rest))


def _block(content: Any) -> dict[str, Any]:
    return {"type": "text", "text": content if isinstance(content, str) else ""}


def anthropic_assistant(blocks: list[Any]) -> NewMessage:
    """An assistant turn from its content blocks (request history or assembled response)."""
    text: list[str] = []
    calls: list[ToolCall] = []
    parts: list[Any] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text.append(str(block.get("text", "")))
        elif kind == "tool_use":
            args = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(ToolCall(str(block.get("id", "")), str(block.get("name", "")), args))
        else:
            parts.append(block)
    return NewMessage("assistant", "".join(text), tuple(parts) or None, tuple(calls))
