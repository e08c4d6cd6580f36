"""The ``goal`` tool (SPEC GOAL-1): applying its operations is a pure function.

``apply_goal_call(tree, arguments, trace_id, sequence)`` returns the new tree, the text of
the tool result and the ``GoalEvent`` rows to record; it never touches the store. One call
may combine operations; they apply in a fixed order: ``done`` / ``abandon`` first (finishing
the current work), then ``add`` (under ``under`` or at the top level), then ``focus``.
A call with an error changes nothing and records nothing; the result text says what was wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from core.goals.tree import GoalTree
from core.goals.views import compact_view
from core.records import GoalEvent
from core.tool_schema import function_schema

TOOL_NAME = "goal"

#: OpenAI function schema of the tool, for the tool registry.
GOAL_TOOL_SCHEMA: dict[str, Any] = function_schema(
    TOOL_NAME,
    (
        "Plan and track the task as a tree of goals. add: new goal title(s); under: "
        "parent goal id for add; focus: goal id to work on; done: goal id finished "
        "(default: the focus) with summary; abandon: goal id dropped with reason."
    ),
    {
        "type": "object",
        "properties": {
            "add": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"type": "string"}},
                ]
            },
            "under": {"type": "string"},
            "focus": {"type": "string"},
            "done": {"type": "string"},
            "summary": {"type": "string"},
            "abandon": {"type": "string"},
            "reason": {"type": "string"},
        },
    },
)


class GoalError(ValueError):
    """A goal call that cannot apply; its message becomes the tool result."""


@dataclass(frozen=True, slots=True)
class GoalCallResult:
    tree: GoalTree
    text: str
    """The tool result the model sees."""
    events: tuple[GoalEvent, ...]
    ok: bool = True


def parse_arguments(arguments: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        data = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise GoalError(f"arguments are not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise GoalError("arguments must be a JSON object")
    return data


def apply_goal_call(
    tree: GoalTree, arguments: str | dict[str, Any], trace_id: str, sequence: int
) -> GoalCallResult:
    """Apply one ``goal`` tool call made by the message at ``sequence``."""
    try:
        args = parse_arguments(arguments)
        new, notes, events = _apply(tree, args, trace_id, sequence)
    except GoalError as exc:
        text = f"Error: {exc}\n\n## Current plan\n{compact_view(tree)}"
        return GoalCallResult(tree, text, (), ok=False)
    text = "## Updated\n" + "\n".join(f"- {n}" for n in notes)
    return GoalCallResult(new, f"{text}\n\n## Current plan\n{compact_view(new)}", tuple(events))


def apply_event(tree: GoalTree, event: GoalEvent) -> GoalTree:
    """Replay one recorded event (unknown ops and ids are ignored: events are history)."""
    payload = event.payload if isinstance(event.payload, dict) else {}
    gid = event.goal_id
    if event.op == "add" and gid is not None and tree.get(gid) is None:
        return tree.add(gid, str(payload.get("title", "")), payload.get("parent"))
    if gid is None or tree.get(gid) is None:
        return tree.set_focus(None) if event.op == "focus" and gid is None else tree
    if event.op == "focus":
        return tree.set_focus(gid)
    if event.op == "done":
        return tree.finish(gid, "completed", str(payload.get("summary", "")))
    if event.op == "abandon":
        return tree.finish(gid, "abandoned", str(payload.get("reason", "")))
    return tree


def _apply(
    tree: GoalTree, args: dict[str, Any], trace_id: str, sequence: int
) -> tuple[GoalTree, list[str], list[GoalEvent]]:
    events: list[GoalEvent] = []
    notes: list[str] = []

    def emit(op: str, gid: str | None, payload: Any = None) -> None:
        nonlocal tree
        ev = GoalEvent(trace_id, sequence, op, gid, payload)
        tree = apply_event(tree, ev)
        events.append(ev)

    known = {"add", "under", "focus", "done", "summary", "abandon", "reason"}
    unknown = sorted(set(args) - known)
    if unknown:
        raise GoalError(f"unknown argument(s) {', '.join(unknown)}")
    if not any(k in args for k in ("add", "focus", "done", "abandon")):
        raise GoalError("nothing to do: give add, focus, done or abandon")
    if "done" in args:
        gid = _target(tree, args["done"], "done")
        summary = str(args.get("summary", "")).strip()
        emit("done", gid, {"summary": summary})
        notes.append(f"completed {gid}" + (f": {summary}" if summary else ""))
    if "abandon" in args:
        gid = _target(tree, args["abandon"], "abandon")
        reason = str(args.get("reason", "")).strip()
        emit("abandon", gid, {"reason": reason})
        notes.append(f"abandoned {gid}" + (f": {reason}" if reason else ""))
    if "add" in args:
        parent = _parent(tree, args.get("under"))
        added = []
        for title in _titles(args["add"]):
            gid = tree.next_id(parent)
            emit("add", gid, {"title": title, "parent": parent})
            notes.append(f"added {gid}: {title}")
            added.append(gid)
        if tree.focus is None and "focus" not in args and added:
            emit("focus", added[0])
            notes.append(f"focus: {added[0]}")
    if "focus" in args:
        gid = _unfinished(tree, args["focus"], "focus")
        emit("focus", gid)
        notes.append(f"focus: {gid}")
    return tree, notes, events


def _titles(value: Any) -> list[str]:
    items = value if isinstance(value, list) else str(value).split("\n")
    titles = [str(t).strip() for t in items if str(t).strip()]
    if not titles:
        raise GoalError("add needs at least one non-empty title")
    return titles


def _parent(tree: GoalTree, under: Any) -> str | None:
    if under is None or str(under).strip() == "":
        return None
    return _existing(tree, under, "under")


def _existing(tree: GoalTree, value: Any, op: str) -> str:
    gid = str(value).strip()
    if tree.get(gid) is None:
        raise GoalError(f"{op}: unknown goal {gid!r}")
    return gid


def _target(tree: GoalTree, value: Any, op: str) -> str:
    """The goal a done/abandon applies to: the given id, or the focus when empty."""
    if value in (None, "", True):
        if tree.focus is None:
            raise GoalError(f"{op}: no goal id given and no goal in focus")
        return tree.focus
    return _unfinished(tree, value, op)


def _unfinished(tree: GoalTree, value: Any, op: str) -> str:
    gid = _existing(tree, value, op)
    goal = tree.get(gid)
    if goal is not None and goal.finished:
        raise GoalError(f"{op}: goal {gid} is already {goal.status}")
    return gid
