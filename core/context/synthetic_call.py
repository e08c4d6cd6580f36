"""A synthetic tool round: how the runtime puts context the model did not ask for into the
trace (the periodic ``get_current_context``, a ``skill`` load) so that it reads, and is
sent, as an ordinary tool call and its result."""

from __future__ import annotations

from typing import Any

from core.records import NewMessage, ToolCall


def call_and_result(call: ToolCall, text: str, **fields: Any) -> tuple[NewMessage, NewMessage]:
    """The assistant message making ``call`` and the tool message answering it with
    ``text``, both with ``fields`` (kind, agent, goal, branch, metadata)."""
    return (
        NewMessage("assistant", "", tool_calls=(call,), **fields),
        NewMessage("tool", text, tool_call_id=call.id, name=call.name, **fields),
    )
