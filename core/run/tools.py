"""Tools the model can call: a registry of named handlers with JSON-schema parameters."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.errors import InvalidInputError
from core.tool_schema import function_schema


@dataclass(frozen=True, slots=True)
class ImageBlob:
    data: bytes
    mime: str = "image/png"
    description: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns. ``content`` is what enters the context (after slimming)."""

    content: str
    is_error: bool = False
    images: tuple[ImageBlob, ...] = ()
    metadata: dict[str, Any] | None = None
    slim: dict[str, Any] | None = None
    """A tool's own slim form {summary, refs, coverage, unresolved} for a large output."""


@dataclass
class ToolContext:
    """What a handler may use: the run it belongs to and the call being executed."""

    trace_id: str
    call_id: str
    step: int
    runtime: Any
    """The ``Runner`` (built-in tools reach the GoalTree, refs and memory through it)."""
    agent_name: str = "main"


Handler = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult] | ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    read_only: bool = True
    """Safe for a restricted (subagent) registry."""

    def schema(self) -> dict[str, Any]:
        return function_schema(self.name, self.description, self.parameters)

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = self.handler(arguments, ctx)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, str):
            return ToolResult(result)
        return result


@dataclass
class ToolRegistry:
    tools: dict[str, Tool] = field(default_factory=dict)

    def add(self, tool: Tool) -> Tool:
        self.tools[tool.name] = tool
        return tool

    def extend(self, tools: Iterable[Tool]) -> ToolRegistry:
        for t in tools:
            self.add(t)
        return self

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def restricted(self, names: Iterable[str] | None = None) -> ToolRegistry:
        """A registry with only read-only tools (or exactly ``names``) for a subagent."""
        wanted = set(names) if names is not None else None
        return ToolRegistry(
            {
                n: t
                for n, t in self.tools.items()
                if (t.name in wanted if wanted is not None else t.read_only)
            }
        )

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.tools.values()]

    def describe(self) -> list[tuple[str, str]]:
        """(name, one-line description) pairs for the system prompt's tools section."""
        return [(t.name, t.description.splitlines()[0]) for t in self.tools.values()]


def parse_arguments(raw: str, tool: str) -> dict[str, Any]:
    """A tool call's JSON arguments; malformed JSON is the model's error, named clearly."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"tool {tool}: arguments are not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise InvalidInputError(f"tool {tool}: arguments must be a JSON object")
    return value
