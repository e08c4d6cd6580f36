"""Goal compaction (SPEC CMP-1, seed A Level 1): finished goals lose their working messages.

For a completed or abandoned goal, the ``goal`` tool calls and their results stay; the
goal's other assistant messages and their tool results leave the context (whole units, so
pairing holds); the result of the call that finished the goal becomes a "details cleared"
marker that also carries the refs and failures of what left. User messages always stay;
the goal's runtime reminders (nudges, injected context and skills, notices: role user,
written while it was in focus) leave with it.
A goal is compacted only while its finishing result is in the context (the facts need a
place to go). Messages belong to the goal in focus when they were written (``goal_id``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from core.context.compaction.facts import extract, render
from core.context.compaction.items import call_arguments, message_of
from core.context.compaction.micro import placeholder
from core.context.compaction.records import Records
from core.context.compaction.result import LayerResult, unchanged
from core.context.compaction.units import Unit, units
from core.context.view import View
from core.goals.tool import TOOL_NAME
from core.goals.tree import GoalTree
from core.records import ContextItem, Message, ToolCall

#: Kinds of a finished goal's messages that may leave the context.
DROPPABLE = frozenset({"message", "injected_context", "injected_skill", "nudge", "notice"})


def marker(goal_id: str, status: str) -> str:
    return f"[Goal {goal_id} {status}: details cleared]"


def compact_goals(
    view: View, records: Records, goal_ids: Iterable[str] | None = None
) -> LayerResult:
    tree = records.goals
    wanted = set(goal_ids) if goal_ids is not None else set(tree.finished_ids())
    targets = {g.id for g in tree.goals if g.id in wanted and g.finished}
    items, msgs = view.items, view.messages
    us = units(items, msgs)
    finishing = _finishing_results(items, msgs, us, targets)
    targets &= set(finishing.values())
    if not targets:
        return unchanged("goal", items, "no finished goal with its result in the context")
    owner = _owners(tree, targets)
    kept: list[tuple[tuple[ContextItem, ...], bool]] = []
    removed: list[int] = []
    dropped: dict[str, list[ContextItem]] = {g: [] for g in targets}
    last = len(us) - 1
    get = msgs.get
    for n, u in enumerate(us):
        part = items[u.start : u.end]
        seq = part[0].sequence
        lead = get(seq) if seq is not None else None
        if lead is None:
            kept.append((part, False))
            continue
        calls = lead.tool_calls
        goal_unit = bool(calls) and any(c.name == TOOL_NAME for c in calls)
        goal = owner.get(lead.goal_id) if lead.goal_id else None
        if goal is not None and not goal_unit and _droppable(lead, u, n == last):
            dropped[goal].extend(part)
            removed.extend([i.sequence for i in part if i.sequence is not None])
        else:
            kept.append((part, goal_unit))
    final: list[ContextItem] = []
    replaced: list[int] = []
    for part, goal_unit in kept:
        if not goal_unit:
            final.extend(part)
            continue
        for item in part:
            new = _rewrite(item, msgs, finishing, owner, dropped, tree)
            if new is not item and item.sequence is not None:
                replaced.append(item.sequence)
            final.append(new)
    if not removed and not replaced:
        return unchanged("goal", items, "finished goals already compacted")
    return LayerResult(
        "goal",
        tuple(final),
        removed=tuple(removed),
        replaced=tuple(replaced),
        details={"goals": sorted(targets)},
    )


def _finishing_results(
    items: tuple[ContextItem, ...], msgs: Mapping[int, Message], us: list[Unit], targets: set[str]
) -> dict[int, str]:
    """Sequence of each tool result that finished a target goal → that goal's id."""
    out: dict[int, str] = {}
    for u in us:
        if not u.calls:
            continue
        lead = message_of(items[u.start], msgs)
        if lead is None:
            continue
        finished = {}
        for call in lead.tool_calls:
            if call.name == TOOL_NAME:
                gid = _finished_by(call.arguments, lead.goal_id)
                if gid in targets:
                    finished[call.id] = gid
        if not finished:
            continue
        for item in items[u.start + 1 : u.end]:
            res = message_of(item, msgs)
            if res is not None and res.tool_call_id in finished:
                out[res.sequence] = finished[res.tool_call_id]
    return out


def _finished_by(arguments: str, focus: str | None) -> str | None:
    """The goal a ``goal`` call's arguments finish (``done``/``abandon``), if any."""
    found, value = _finish_argument(arguments)
    if not found:
        return None
    return value if value is not None else focus


@lru_cache(maxsize=1 << 12)
def _finish_argument(arguments: str) -> tuple[bool, str | None]:
    """Whether the arguments finish a goal, and which (``None``: the goal in focus).
    Memoized: every goal compaction of a run reads the same calls again."""
    args = call_arguments(ToolCall("", TOOL_NAME, arguments))
    for op in ("done", "abandon"):
        if op in args:
            value = args[op]
            return True, (str(value).strip() if value not in (None, "", True) else None)
    return False, None


def _owners(tree: GoalTree, targets: set[str]) -> dict[str, str]:
    """Goal id → the deepest target goal whose subtree holds it (ids are paths: "1.2.3")."""
    owner: dict[str, str] = {}
    for g in tree.goals:
        parts = g.id.split(".")
        for n in range(len(parts), 0, -1):
            prefix = ".".join(parts[:n])
            if prefix in targets:
                owner[g.id] = prefix
                break
    return owner


def _droppable(lead: Message, u: Unit, last: bool) -> bool:
    """Assistant work (not a goal call, which the caller checked) that may leave."""
    if lead.kind not in DROPPABLE:
        return False
    if lead.role == "user" and lead.kind == "message":
        return False  # what the user said stays; runtime reminders (role user) may go
    if lead.role not in ("assistant", "tool", "user"):
        return False
    return not (last and u.pending)


def _rewrite(
    item: ContextItem,
    msgs: Mapping[int, Message],
    finishing: dict[int, str],
    owner: dict[str, str],
    dropped: dict[str, list[ContextItem]],
    tree: GoalTree,
) -> ContextItem:
    msg = message_of(item, msgs)
    if msg is None or msg.role != "tool" or item.content is not None:
        return item
    gid = finishing.get(msg.sequence)
    if gid is not None:
        goal = tree.get(gid)
        lines = [marker(gid, goal.status if goal else "completed")]
        # the goal's own done summary states its completion: no per-call Done lines
        lines += render(extract(dropped.get(gid, ()), msgs, done_calls=False), done=False)
        return ContextItem(item.sequence, "\n".join(lines), item.role, item.kind)
    if msg.name != TOOL_NAME and msg.goal_id in owner and msg.name is not None:
        text = placeholder(msg.name, msg)  # a parallel non-goal call beside a goal call
        if len(text) < len(msg.content):
            return ContextItem(item.sequence, text, item.role, item.kind)
    return item
