"""Phases of the step machine and what one step reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal


class Phase(StrEnum):
    """Where the machine stands; each is a point where a caller may pause."""

    IDLE = "idle"
    """No turn open: ``start_turn`` first."""
    PREPARE = "prepare"
    """Before assembling the next context (injections, nudges, compaction)."""
    MODEL = "model"
    """Before the model call."""
    TOOLS = "tools"
    """Before the next tool execution."""
    BOOKKEEPING = "bookkeeping"
    """After a round: periodic injection, goal compaction, checkpoints, hooks."""
    DONE = "done"
    """The turn ended (final answer, max steps, or an error surfaced)."""


@dataclass(frozen=True)
class StepResult:
    ran: Phase
    next: Phase
    sequences: tuple[int, ...] = ()
    """Messages this step wrote."""
    detail: str = ""


StopReason = Literal["", "done", "paused", "max_steps", "cancelled", "error"]
"""Why ``Runner.run`` returned (``""``: it has not run)."""


@dataclass
class RunResult:
    steps: int = 0
    llm_calls: int = 0
    tool_calls: int = 0
    final: str | None = None
    stopped: StopReason = ""
    """Why ``run`` returned: done, paused, max_steps, cancelled, error."""
    errors: list[str] = field(default_factory=list)
