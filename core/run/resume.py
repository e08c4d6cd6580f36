"""Where a stored trace stands: the phase a runner attached to its head continues with.

Derived from the last messages of the main path only, so the GUI can tell whether a trace
is finished or waits for a tool before any runner exists: calls without results are
pending tools, answered calls leave the round's bookkeeping, a final answer means the
turn is done, anything else prepares the next model call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.agents import made_by
from core.records import Message, ToolCall
from core.run.state import Phase

TAIL = 65
"""Messages read back from the head (a round's calls and results fit easily)."""


@dataclass(frozen=True)
class ResumePoint:
    phase: Phase
    call_message: Message | None = None
    """The assistant message whose tool calls the round is working through."""
    pending: list[ToolCall] = field(default_factory=list)
    """Its calls without a result on the path, in call order."""
    final: str | None = None


def main_path_tail(reader: Any, trace_id: str, head: int) -> list[Message]:
    depth = int(reader.message(trace_id, head).depth)
    return list(reader.main_path_page(trace_id, max(0, depth - TAIL + 1), TAIL, head=head))


def resume_point(tail: list[Message]) -> ResumePoint:
    """The phase after the last message of ``tail`` (the end of a path)."""
    if not tail:
        return ResumePoint(Phase.IDLE)
    last_call = next((m for m in reversed(tail) if m.role == "assistant" and m.tool_calls), None)
    answered = {m.tool_call_id for m in tail if m.role == "tool"}
    last = tail[-1]
    if last_call is not None and (last is last_call or last.role == "tool"):
        pending = [c for c in last_call.tool_calls if c.id not in answered]
        phase = Phase.TOOLS if pending else Phase.BOOKKEEPING
        return ResumePoint(phase, last_call, pending)
    if last.role == "assistant" and last.kind == "message" and last.content:
        return ResumePoint(Phase.DONE, final=last.content)
    return ResumePoint(Phase.PREPARE)


def resume_point_of(reader: Any, trace_id: str) -> ResumePoint:
    """Where a runner attached to the trace's head would continue."""
    head = reader.trace(trace_id).head
    if head is None:
        return ResumePoint(Phase.IDLE)
    return resume_point(main_path_tail(reader, trace_id, head))


@dataclass(frozen=True)
class TurnFacts:
    """What the turn a head lies in says of itself: the runner's turn counters there."""

    turn_index: int | None = None
    steps: int = 0
    """Model calls of the agent since the turn's user message, on the path."""
    reported: tuple[int, int] | None = None
    """(prompt tokens the provider reported, our estimate) of the last answered call on
    the path: TOK-2's anchor (``RunnerCore.budget_tokens``)."""


def turn_facts(reader: Any, trace_id: str, head: int, agent_name: str = "main") -> TurnFacts:
    """The turn counters at ``head`` as a runner that had just reached it would hold them
    (a rewind: nothing of the abandoned continuation counts)."""
    path = {m.sequence: m for m in reader.iter_main_path(trace_id, head=head)}
    turn_index, start = None, -1
    for session in reader.sessions(trace_id):
        for turn in reader.turns(session["id"]):
            user = turn["user_sequence"]
            if user in path and user > start:
                turn_index, start = int(turn["turn_index"]), int(user)
    steps = sum(
        1
        for seq, m in path.items()
        if seq > start and m.role == "assistant" and m.kind == "message"
        and made_by(m, agent_name)
    )  # fmt: skip
    return TurnFacts(turn_index, steps, _reported(reader, trace_id, path, agent_name))


def _reported(
    reader: Any, trace_id: str, path: dict[int, Message], agent_name: str
) -> tuple[int, int] | None:
    for call in reversed(reader.llm_calls(trace_id)):
        if not made_by(call, agent_name) or call.response_sequence not in path:
            continue
        prompt = (call.usage or {}).get("prompt_tokens")
        estimate = (call.params or {}).get("input_tokens")
        if isinstance(prompt, int) and prompt > 0 and isinstance(estimate, int):
            return prompt, estimate
        return None
    return None
