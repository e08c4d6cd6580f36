"""Periodic context injection (SPEC INJ-2, seed A "Context 周期注入").

Every ``interval`` iterations (default 5) of the main path, after the round's tools ran,
the runtime appends a synthetic ``get_current_context`` call and its result: the time,
the GoalTree's compact view with a focus reminder, collaborators, notifications and
whatever registered injection hooks contribute. To the model it looks as if it had called
the tool itself. It is skipped when the model already called the tool in that round and
in side branches (reflection, compression, …), which have their own purpose.

The sources are callables, so this module depends on no GoalTree implementation: the run
loop passes ``goal_view=lambda: tree.to_prompt()`` or similar, and tests pass fixed text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.context.synthetic_call import call_and_result
from core.records import Message, NewMessage, ToolCall
from core.store.writer import HEAD, Writer
from core.tool_schema import function_schema

GET_CURRENT_CONTEXT = "get_current_context"
DEFAULT_INTERVAL = 5

InjectionHook = Callable[[], str | None]
"""Returns extra text for the injection, or ``None``/``""`` for nothing this time."""


@dataclass(frozen=True, slots=True)
class Collaborator:
    """Another agent or person working on the same task, as the model should see it."""

    name: str
    status: str
    detail: str = ""


class InjectionHooks:
    """Named hooks whose output is appended to every context injection, in order."""

    def __init__(self) -> None:
        self._hooks: dict[str, InjectionHook] = {}

    def register(self, name: str, hook: InjectionHook) -> None:
        self._hooks[name] = hook

    def unregister(self, name: str) -> None:
        self._hooks.pop(name, None)

    def names(self) -> list[str]:
        return list(self._hooks)

    def collect(self) -> list[tuple[str, str]]:
        """``(name, text)`` of every hook with something to say; a failing hook says so."""
        out: list[tuple[str, str]] = []
        for name, hook in self._hooks.items():
            try:
                text = hook()
            except Exception as exc:  # a broken hook must not stop the run
                text = f"(hook failed: {type(exc).__name__}: {exc})"
            if text:
                out.append((name, text.strip()))
        return out


@dataclass
class ContextSources:
    """Where the parts of a ``get_current_context`` result come from."""

    clock: Callable[[], float] = time.time
    goal_view: Callable[[], str] | None = None
    """The GoalTree's compact view (GOAL-2)."""
    focus: Callable[[], str | None] | None = None
    """The goal in focus as ``"<id> <description>"``, or ``None``."""
    collaborators: Callable[[], Sequence[Collaborator]] | None = None
    notifications: Callable[[], Sequence[str]] | None = None
    hooks: InjectionHooks = field(default_factory=InjectionHooks)


def format_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def current_context_text(sources: ContextSources) -> str:
    """The ``get_current_context`` result (periodic injection and the tool share it)."""
    parts = [f"## Current time\n{format_time(sources.clock())}"]
    goals = _goals_part(sources)
    if goals:
        parts.append(goals)
    people = list(sources.collaborators()) if sources.collaborators else []
    if people:
        rows = [f"- {c.name}: {c.status}" + (f" — {c.detail}" if c.detail else "") for c in people]
        parts.append("## Collaborators\n" + "\n".join(rows))
    notes = [n for n in (sources.notifications() if sources.notifications else ()) if n]
    if notes:
        parts.append("## Notifications\n" + "\n".join(f"- {n}" for n in notes))
    parts.extend(f"## {name}\n{text}" for name, text in sources.hooks.collect())
    return "\n\n".join(parts)


def _goals_part(sources: ContextSources) -> str:
    view = sources.goal_view().strip() if sources.goal_view else ""
    focus = sources.focus() if sources.focus else None
    if not view and not focus:
        return ""
    lines = ["## Goals"]
    if view:
        lines.append(view)
    if focus:
        lines.append(
            f"Focus: {focus}. Keep working on this goal; finish it with "
            "goal(done=..., summary=...) before moving on."
        )
    else:
        lines.append("No goal is in focus: choose one with goal(focus=...).")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PeriodicDecision:
    """Whether to inject after this iteration, and why (shown in the run's event stream)."""

    inject: bool
    reason: str


def periodic_decision(
    iteration: int,
    *,
    interval: int = DEFAULT_INTERVAL,
    branch_type: str | None = None,
    round_tool_names: Iterable[str] = (),
) -> PeriodicDecision:
    """Decide for iteration ``iteration`` (1-based count of model calls on this path)."""
    if interval <= 0:
        return PeriodicDecision(False, "periodic injection is off")
    if branch_type is not None:
        return PeriodicDecision(False, f"skipped: {branch_type} side branch")
    if iteration <= 0 or iteration % interval:
        return PeriodicDecision(False, f"not due: iteration {iteration}, every {interval}")
    if GET_CURRENT_CONTEXT in set(round_tool_names):
        return PeriodicDecision(False, "skipped: the model called get_current_context itself")
    return PeriodicDecision(True, f"due: iteration {iteration}, every {interval}")


def context_call_id(sequence: int) -> str:
    """Id of a synthetic call stored at ``sequence``: unique in the trace, stable on replay."""
    return f"inj_ctx_{sequence}"


def context_injection_messages(
    text: str,
    call_id: str,
    *,
    agent_name: str = "main",
    goal_id: str | None = None,
    iteration: int | None = None,
) -> tuple[NewMessage, NewMessage]:
    """The synthetic call and its result, both of kind ``injected_context``."""
    return call_and_result(
        ToolCall(call_id, GET_CURRENT_CONTEXT, "{}"),
        text,
        kind="injected_context",
        agent_name=agent_name,
        goal_id=goal_id,
        metadata={"iteration": iteration},
    )


def inject_context(
    w: Writer,
    trace_id: str,
    sources: ContextSources,
    iteration: int,
    *,
    parent: Any = HEAD,
    agent_name: str = "main",
    goal_id: str | None = None,
) -> list[Message]:
    """Append the synthetic pair on the main line (no branch fields: main path only)."""
    pair = context_injection_messages(
        current_context_text(sources),
        context_call_id(w.next_sequence(trace_id)),
        agent_name=agent_name,
        goal_id=goal_id,
        iteration=iteration,
    )
    return w.append(trace_id, list(pair), parent=parent)


def get_current_context_schema() -> dict[str, Any]:
    """OpenAI function schema of the ``get_current_context`` tool the model may call."""
    return function_schema(
        GET_CURRENT_CONTEXT,
        "Current time, goal tree with focus, collaborators, notifications.",
    )
