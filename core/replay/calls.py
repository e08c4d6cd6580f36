"""The model calls of a trace as one list, recorded or derived.

A ctxlens run records every call (``llm_calls``: the exact item list, the head, the
response). Some imported traces record none; then each assistant message on the main path
stands for a call whose head is the message before it and whose context is derived from
the path (``recorded=False``) — what ctxlens's View gives at that head, not what the other
tool actually sent. Failed attempts (no response) stay in the list so indexes line up with
``llm_calls.call_index``; ``answered`` filters them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from core.agents import is_main_agent
from core.importers.usage import OPEN_AT_STOP, normalize_usage
from core.records import ContextItem, LlmCall, Message
from core.store.paths import on_path
from core.store.reader import Reader

InputBasis = Literal["recorded", "counted"]
"""Where a call's input tokens come from (``CallRef.input_basis``)."""


@dataclass(frozen=True, slots=True)
class CallRef:
    """One model call: where it stood (``head``), what it sent, what came back."""

    position: int
    """Index in the trace's call list (the scrubber's tick)."""
    call_index: int | None
    """``llm_calls.call_index``; ``None`` for a call derived from an assistant message."""
    agent_name: str
    head: int | None
    response_sequence: int | None
    request_sha256: str | None = None
    context: tuple[ContextItem, ...] | None = None
    """The recorded item list (``None``: derive it from the path at ``head``)."""
    usage: Any = None
    params: Any = None
    error: str | None = None
    model: str = ""
    created_at: float = 0.0
    branch_type: str | None = None
    """The side branch the call was made on (``compression``: a compaction's summarizer,
    ``subagent``); ``None``: the agent's own line."""

    @property
    def recorded(self) -> bool:
        return self.call_index is not None

    @property
    def answered(self) -> bool:
        return self.response_sequence is not None and self.error is None

    @property
    def input_tokens(self) -> int | None:
        """Tokens sent: the prompt tokens the model's usage recorded (all input, cache reads
        and writes too), else ctxlens's own count of the request (``counted_input_tokens``).
        The record wins: it is what the model billed and measured against its window."""
        recorded = self.recorded_input_tokens
        return recorded if recorded is not None else self.counted_input_tokens

    @property
    def input_basis(self) -> InputBasis:
        """Where ``input_tokens`` comes from: ``recorded`` (the model's usage) or ``counted``
        (ctxlens's count: of the request its run sent, or where no usage and no count was
        recorded, of the context as the comparison and playback measure it)."""
        return "recorded" if self.recorded_input_tokens is not None else "counted"

    @property
    def recorded_input_tokens(self) -> int | None:
        """The prompt tokens the model's usage recorded (``None``: no usage recorded)."""
        usage = normalize_usage(self.usage) or {}  # all input, cache reads and writes too
        value = usage.get("prompt_tokens")
        return int(value) if isinstance(value, (int, float)) else None

    @property
    def counted_input_tokens(self) -> int | None:
        """ctxlens's own count of the request it sent (a ctxlens run; ``None`` for an
        import: the tool's request is not there to count)."""
        params = self.params if isinstance(self.params, dict) else {}
        value = params.get("input_tokens")
        return int(value) if isinstance(value, int) else None

    @property
    def output_open(self) -> bool:
        """The output tokens are those of a response still being written when the live
        capture recording it stopped (``core/importers/usage.py:OPEN_AT_STOP``)."""
        return isinstance(self.usage, dict) and self.usage.get(OPEN_AT_STOP) is True

    @property
    def output_tokens(self) -> int | None:
        usage = self.usage if isinstance(self.usage, dict) else {}
        value = usage.get("completion_tokens", usage.get("output_tokens"))
        return int(value) if isinstance(value, (int, float)) else None


def trace_calls(reader: Reader, trace_id: str) -> list[CallRef]:
    """Every call of the trace in order: recorded ones, or derived ones when none are."""
    return recorded_calls(reader, trace_id) or derived_calls(reader, trace_id)


def recorded_calls(reader: Reader, trace_id: str) -> list[CallRef]:
    """The trace's recorded calls (``llm_calls``) in order; empty when it records none."""
    return [_from_record(n, c) for n, c in enumerate(reader.llm_calls(trace_id))]


def derived_calls(reader: Reader, trace_id: str) -> list[CallRef]:
    """One call per assistant message on the main path (a trace without call records)."""
    out: list[CallRef] = []
    prev: Message | None = None
    for m in reader.iter_main_path(trace_id):
        if m.role == "assistant" and m.kind == "message":
            head = prev.sequence if prev is not None else None
            out.append(
                CallRef(
                    len(out),
                    None,
                    m.agent_name,
                    head,
                    m.sequence,
                    usage=m.usage,
                    created_at=m.created_at,
                )
            )
        prev = m
    return out


def _from_record(position: int, c: LlmCall) -> CallRef:
    return CallRef(
        position,
        c.call_index,
        c.agent_name,
        c.head_sequence,
        c.response_sequence,
        c.request_sha256,
        c.context,
        c.usage,
        c.params,
        c.error,
        c.model,
        c.created_at,
        c.branch_type,
    )


def main_calls(calls: list[CallRef]) -> list[CallRef]:
    """The main agent's answered calls (``core/agents.py:is_main_agent``: made on no side
    branch, whatever the agent's name): "the k-th call" when two traces are compared."""
    return [c for c in calls if is_main_agent(c) and c.answered]


def live_calls(reader: Reader, trace_id: str, calls: list[CallRef]) -> list[CallRef]:
    """The calls of the current run: answered on the main path, or on a side branch (a
    subagent) that forks from it — not those a rewind left on an abandoned branch."""
    segs = reader.segments(trace_id)
    lines = reader.lines(trace_id)
    forks = reader.fork_parents(trace_id)
    anchors = [c.response_sequence or c.head for c in calls]
    pos = reader.positions(trace_id, [a for a in anchors if a is not None])
    pos.update(reader.positions(trace_id, list(forks.values())))

    def live(seq: int | None, hops: int = 0) -> bool:
        if seq is None or seq not in pos or hops > 50:
            return seq is None
        line, depth = pos[seq]
        if on_path(segs, line, depth):
            return True
        info = lines.get(line)
        if info is None or info.branch_type is None:
            return False  # an abandoned main-line branch
        return live(forks.get(line), hops + 1)

    return [c for c, a in zip(calls, anchors, strict=True) if live(a)]
