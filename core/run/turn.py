"""The turn's state as one typed value: where the step machine stands and what its phases
hand each other. Each phase reads and writes it; starting, attaching or rewinding a turn
replaces it whole (pydantic-ai's agent graph keeps one state value that its nodes —
user prompt, model request, call tools — run over; the phases here are those nodes)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, overload

from core.records import Message, NewMessage, ToolCall
from core.run.resume import ResumePoint
from core.run.state import Phase

T = TypeVar("T")


@dataclass
class TurnState:
    phase: Phase = Phase.IDLE
    steps: int = 0
    """Model calls this turn (``RunConfig.max_steps`` counts them)."""
    final: str | None = None
    errors: list[str] = field(default_factory=list)
    """Why the turn ended in error (a model call that gave up); ``run`` reports it."""
    call_message: Message | None = None
    """The assistant message whose tool calls this round works through."""
    round_calls: list[ToolCall] = field(default_factory=list)
    pending: list[ToolCall] = field(default_factory=list)
    """The round's calls still to execute, in order."""
    last_step: tuple[int, list[str]] | None = None
    """(reply tokens, tool names) of the last model step: the next PREPARE's monitors."""
    final_only: bool = False
    """The next call answers without tools (max steps, diminishing returns)."""
    manual_compact: bool = False
    """``compress_context`` asked for a compaction before the next call."""
    goal_done: list[str] = field(default_factory=list)
    """Goals finished this round (``on_complete`` compacts them in BOOKKEEPING)."""
    image_grants: list[NewMessage] = field(default_factory=list)
    """Image blocks granted this round, appended in BOOKKEEPING."""
    prepared_from: dict[str, Any] | None = None
    """Where the next call's PREPARE began (recorded with the call, for replays)."""
    recovered: list[str] = field(default_factory=list)
    """Recovery-ladder steps since the last recorded call (LLM-3)."""

    @classmethod
    def opened(cls, previous: TurnState) -> TurnState:
        """A new turn, before its first PREPARE; what the last turn left for the next call
        (a requested compaction, recovery steps not yet recorded with a call) stays."""
        return cls(
            Phase.PREPARE, manual_compact=previous.manual_compact, recovered=previous.recovered
        )

    def attached(self, point: ResumePoint) -> TurnState:
        """This turn standing at ``point`` (the head a runner attached to): its round and
        phase follow from the messages there, the counters stay."""
        call = point.call_message
        return replace(
            self,
            phase=point.phase,
            final=point.final,
            call_message=call,
            round_calls=list(call.tool_calls) if call else [],
            pending=list(point.pending),
        )

    def start_round(self, call: Message) -> None:
        self.call_message = call
        self.round_calls = list(call.tool_calls)
        self.pending = list(call.tool_calls)

    def end_round(self) -> None:
        self.call_message = None
        self.round_calls = []
        self.pending = []


class TurnField(Generic[T]):
    """A runner attribute that is a field of its ``turn`` (the public names stay)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> TurnField[T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> T: ...
    def __get__(self, obj: object | None, owner: type) -> T | TurnField[T]:
        if obj is None:
            return self
        value: T = getattr(obj.turn, self.name)  # type: ignore[attr-defined]
        return value

    def __set__(self, obj: object, value: T) -> None:
        setattr(obj.turn, self.name, value)  # type: ignore[attr-defined]
