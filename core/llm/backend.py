"""What the local model server serves: a backend answers one chat request.

A backend sees exactly what a provider would see (model, messages, tools) and returns the
assistant's reply; the server (``core/llm/server.py``) turns that into the wire protocol,
streamed or not. ``UsageMeter`` fills in usage like a provider with a prefix cache would:
prompt tokens by tiktoken, and ``cached_tokens`` = the tokens of the longest run of leading
messages identical to a recent request (message-granular prefix caching).
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.canonical import canonical_json
from core.records import ToolCall
from core.tokens import TokenCounter, default_counter
from core.tokens.counter import REPLY_PRIMING


@dataclass(frozen=True)
class ChatRequest:
    """One ``/chat/completions`` request as the backend sees it."""

    model: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: Any = None
    stream: bool = False
    body: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(str((t.get("function") or {}).get("name", "")) for t in self.tools)

    @property
    def tools_allowed(self) -> bool:
        """Whether the model may answer with tool calls in this request."""
        return bool(self.tools) and self.tool_choice != "none"

    @staticmethod
    def from_body(body: dict[str, Any]) -> ChatRequest:
        return ChatRequest(
            model=str(body.get("model", "")),
            messages=tuple(body.get("messages") or ()),
            tools=tuple(body.get("tools") or ()),
            tool_choice=body.get("tool_choice"),
            stream=bool(body.get("stream", False)),
            body=body,
        )


@dataclass(frozen=True)
class BackendReply:
    """The assistant turn a backend produced."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    reasoning: str = ""
    usage: dict[str, Any] | None = None
    """The usage a real endpoint reported (a replay forwarding to it); ``None``: the
    server estimates it (``UsageMeter``)."""
    model: str | None = None
    """The model that answered, when it is not the one requested."""

    @property
    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


class ChatBackend(Protocol):
    """Anything that can answer a chat request (the scripted model, an echo, a test stub)."""

    def reply(self, request: ChatRequest) -> BackendReply | Awaitable[BackendReply]: ...


class EchoBackend:
    """Replies with the last user message; for manual runs and the client benchmark."""

    def reply(self, request: ChatRequest) -> BackendReply:
        for m in reversed(request.messages):
            if m.get("role") == "user":
                return BackendReply(text=f"echo: {_text(m.get('content'))}")
        return BackendReply(text="echo: (no user message)")


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


class UsageMeter:
    """Provider-like usage: tiktoken counts plus a message-granular prefix cache."""

    def __init__(self, counter: TokenCounter | None = None, remember: int = 32) -> None:
        self.counter = counter or default_counter()
        self._recent: deque[tuple[str, ...]] = deque(maxlen=remember)

    def message_tokens(self, message: dict[str, Any]) -> int:
        calls = [
            {"name": c["function"]["name"], "arguments": c["function"].get("arguments", "")}
            for c in message.get("tool_calls") or ()
        ]
        content = _text(message.get("content"))
        return self.counter.count_message(
            str(message.get("role", "")), content, calls, message.get("name")
        ).tokens

    def measure(self, messages: Sequence[dict[str, Any]]) -> PromptSize:
        """Prompt tokens and cached tokens of a request (nothing remembered yet)."""
        keys = tuple(_key(m) for m in messages)
        sizes = [self.message_tokens(m) for m in messages]
        shared = max((_common_prefix(keys, old) for old in self._recent), default=0)
        return PromptSize(REPLY_PRIMING + sum(sizes), sum(sizes[:shared]), keys)

    def remember(self, size: PromptSize) -> None:
        """The request was processed: later requests can hit its prefix."""
        self._recent.append(size.keys)

    def completion_tokens(self, reply: BackendReply) -> int:
        return self.counter.count_text(reply.text) + sum(
            self.counter.count_text(c.name) + self.counter.count_text(c.arguments)
            for c in reply.tool_calls
        )

    def usage(self, size: PromptSize, reply: BackendReply) -> dict[str, Any]:
        completion = self.completion_tokens(reply)
        return {
            "prompt_tokens": size.tokens,
            "completion_tokens": completion,
            "total_tokens": size.tokens + completion,
            "prompt_tokens_details": {"cached_tokens": size.cached},
        }


@dataclass(frozen=True)
class PromptSize:
    tokens: int
    cached: int
    keys: tuple[str, ...] = field(repr=False, default=())


def _key(message: dict[str, Any]) -> str:
    return hashlib.sha1(canonical_json(message).encode("utf-8")).hexdigest()


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
