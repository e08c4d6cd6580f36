"""The OpenAI function schema of a tool: the one shape every tool definition a request
carries takes (the runtime's tools, ``goal``, ``skill``, ``read_ref``,
``get_current_context``, the delegation tools)."""

from __future__ import annotations

from typing import Any


def function_schema(
    name: str, description: str, parameters: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``{"type": "function", "function": {name, description, parameters}}``; the
    parameters default to an object without properties (a tool that takes none)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {}}
            if parameters is None
            else parameters,
        },
    }
