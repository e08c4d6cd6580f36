"""Reading context items: effective role, kind, text and tokens of an item in a View.

A ``ContextItem`` is a stored message (maybe shown with other content) or a synthetic item;
every transform asks the same questions about it, answered here once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from core.context.shared_tuples import shared
from core.context.view import View
from core.context.view import kind_of as _kind
from core.context.view import role_of as _role
from core.context.view import tokens_of as _tokens
from core.records import ContextItem, Message, ToolCall


def message_of(item: ContextItem, messages: Mapping[int, Message]) -> Message | None:
    return messages.get(item.sequence) if item.sequence is not None else None


def role_of(item: ContextItem, messages: Mapping[int, Message]) -> str:
    return _role(item, message_of(item, messages))


def kind_of(item: ContextItem, messages: Mapping[int, Message]) -> str:
    return _kind(item, message_of(item, messages))


def calls_of(item: ContextItem, messages: Mapping[int, Message]) -> tuple[ToolCall, ...]:
    msg = message_of(item, messages)
    return msg.tool_calls if msg is not None else ()


def call_id_of(item: ContextItem, messages: Mapping[int, Message]) -> str | None:
    msg = message_of(item, messages)
    return msg.tool_call_id if msg is not None and role_of(item, messages) == "tool" else None


def content_of(item: ContextItem, messages: Mapping[int, Message]) -> str:
    if item.content is not None:
        return item.content
    msg = message_of(item, messages)
    return msg.content if msg is not None else ""


def visible_text(item: ContextItem, messages: Mapping[int, Message]) -> str:
    """Everything of an item the model can read: content, tool names and arguments.

    Arguments appear raw and with their string values decoded, so a title written as
    ``\\u`` escapes by one model still matches as plain text.
    """
    msg = message_of(item, messages)
    content = item.content if item.content is not None else (msg.content if msg else "")
    if msg is None or not msg.tool_calls:
        return content
    return calls_text(content, msg.tool_calls)


def calls_text(content: str, calls: Iterable[ToolCall]) -> str:
    """``visible_text`` of a message with tool calls shown with ``content``: the non-empty
    parts, one per line."""
    return "\n".join(calls_parts(content, calls))


def calls_parts(content: str, calls: Iterable[ToolCall]) -> list[str]:
    """``calls_text``'s lines before they are joined (a reader of many messages' texts
    takes the parts: they repeat across messages more often than the joined text)."""
    parts = [content] if content else []
    for call in calls:
        if call.name:
            parts.append(call.name)
        if call.arguments:
            parts.append(call.arguments)
            parts += _arg_strings(call.arguments)
    return parts


@lru_cache(maxsize=1 << 14)
def _arg_strings(arguments: str) -> tuple[str, ...]:
    """The non-empty string values in a call's JSON arguments."""
    return tuple(s for s in _strings(_loads(arguments)) if s)


def tokens_of(item: ContextItem, messages: Mapping[int, Message]) -> int:
    return _tokens(item, message_of(item, messages))


def total_tokens(items: Iterable[ContextItem], messages: Mapping[int, Message]) -> int:
    total = 0
    get = messages.get
    for item in items:
        msg = get(item.sequence) if item.content is None and item.sequence is not None else None
        total += msg.token_count if msg is not None else tokens_of(item, messages)
    return total


def with_items(view: View, items: Iterable[ContextItem]) -> View:
    """``view`` with ``items`` (kept as they are when immutable: a layer's output that
    shares structure with its previous one is not flattened into a copy here)."""
    return View(shared(items), view.messages, view.boundary)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def call_arguments(call: ToolCall) -> dict[str, Any]:
    data = _loads(call.arguments)
    return data if isinstance(data, dict) else {}
