"""The context one agent sees: the main agent's is the trace's View; a subagent's is its
own branch, isolated from the parent's messages (SPEC RUN-4, seed B 1.3)."""

from __future__ import annotations

from core.agents import RUNTIME_MAIN
from core.context.view import View, current_items, resolve
from core.store.reader import Reader


def agent_view(reader: Reader, trace_id: str, tip: int | None, agent_name: str) -> View:
    """``tip`` is the agent's last message (``None``: the trace head, main agent)."""
    items, boundary = current_items(reader, trace_id, tip)
    if agent_name == RUNTIME_MAIN:  # the main agent's view: the trace's, whatever its name
        view = resolve(reader, trace_id, items)
        return View(view.items, view.messages, boundary)
    view = resolve(reader, trace_id, items)
    own_boundary = (
        boundary is not None
        and boundary.at_sequence is not None
        and reader.message(trace_id, boundary.at_sequence).agent_name == agent_name
    )
    kept = tuple(
        i
        for i in items
        if (i.sequence is None and own_boundary)
        or (i.sequence is not None and view.messages[i.sequence].agent_name == agent_name)
    )
    return View(kept, view.messages, boundary if own_boundary else None)
