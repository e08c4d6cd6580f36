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

from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

from core.context.compaction.facts import FactFold, render
from core.context.compaction.items import call_arguments
from core.context.compaction.micro import placeholder
from core.context.compaction.result import LayerResult, unchanged
from core.context.compaction.scan import ContextState, Scan, scan_of
from core.context.compaction.summary_state import Records
from core.context.compaction.units import Unit
from core.context.view import View
from core.goals.tool import TOOL_NAME
from core.goals.tree import GoalTree
from core.records import ContextItem, Message, ToolCall

#: Kinds of a finished goal's messages that may leave the context.
DROPPABLE = frozenset({"message", "injected_context", "injected_skill", "nudge", "notice"})


def marker(goal_id: str, status: str) -> str:
    return f"[Goal {goal_id} {status}: details cleared]"


def compact_goals(
    view: View,
    records: Records,
    goal_ids: Iterable[str] | None = None,
    state: ContextState | None = None,
) -> LayerResult:
    tree = records.goals
    scan = scan_of(view, state)
    fold = scan.fold("goal", _GoalFold)
    targets = fold.targets_in(tree, None if goal_ids is None else tuple(goal_ids))
    memo = fold.memo
    if memo is not None and memo.holds(scan, tree, targets):
        res, owner = memo.grown(view.items), memo.owner
    else:
        res, owner = _compact(scan, fold, tree, set(targets))
    fold.memo = _GoalMemo(tree, targets, owner, len(view.items), len(scan.units) - 1, res)
    return res


def _compact(
    scan: Scan, fold: _GoalFold, tree: GoalTree, targets: set[str]
) -> tuple[LayerResult, dict[str, str]]:
    items = scan.items
    last = _unit_info(scan, len(scan.units) - 1, True) if scan.units else None
    finishing = _finishing(fold, last, targets)
    targets &= set(finishing.values())
    if not targets:
        return unchanged("goal", items, "no finished goal with its result in the context"), {}
    owner = _owners(tree, targets)
    gone = _dropped_ranges(scan, fold, last, owner)
    edits = _rewrites(scan, fold, last, finishing, owner, gone, tree)
    if not gone and not edits:
        return unchanged("goal", items, "finished goals already compacted"), owner
    spans = sorted((lo, hi) for ranges in gone.values() for lo, hi in ranges)
    removed = tuple(chain.from_iterable(scan.seqs[lo:hi] for lo, hi in spans))
    res = LayerResult(
        "goal",
        _assemble(items, spans, edits),
        removed=removed,  # type: ignore[arg-type]  # units' items are stored messages
        replaced=tuple(items[i].sequence for i in sorted(edits)),  # type: ignore[misc]
        details={"goals": sorted(targets)},
    )
    return res, owner


class _GoalMemo(NamedTuple):
    """The last result of a scan, and what it depended on: a context grown by units that
    touch no target goal gets the same result plus its new items."""

    tree: GoalTree
    targets: frozenset[str]
    owner: dict[str, str]
    size: int
    """Items of the context it was computed for."""
    last: int
    """Index of that context's last unit (it may have grown since)."""
    result: LayerResult

    def holds(self, scan: Scan, tree: GoalTree, targets: frozenset[str]) -> bool:
        if targets != self.targets or not (tree is self.tree or tree == self.tree):
            return False
        if self.last < 0 or len(scan.items) < self.size:
            return False
        end = len(scan.units) - 1
        return all(self._neutral(_unit_info(scan, n, n == end)) for n in range(self.last, end + 1))

    def _neutral(self, info: _UnitInfo | None) -> bool:
        if info is None:
            return True
        if info.goal_unit or (info.work_of is not None and info.work_of in self.owner):
            return False
        return not any(g in self.targets for _, gids in info.finishers for g in gids)

    def grown(self, items: Sequence[ContextItem]) -> LayerResult:
        res = self.result
        if not res.changed:
            return unchanged("goal", items, (res.details or {}).get("skipped", ""))
        return replace(res, items=(*res.items, *items[self.size :]))


class _UnitInfo(NamedTuple):
    unit: Unit
    goal_unit: bool
    """The unit makes ``goal`` calls (kept; its results may be rewritten)."""
    work_of: str | None
    """The goal whose droppable work this unit is (``None``: it always stays)."""
    finishers: tuple[tuple[int, tuple[str, ...]], ...]
    """``(result sequence, goals its call finishes, in call order)``."""


def _unit_info(scan: Scan, n: int, last: bool) -> _UnitInfo | None:
    u = scan.units[n]
    lead = scan.msgs[u.start]
    if lead is None:
        return None
    calls = lead.tool_calls
    goal_unit = bool(calls) and any(c.name == TOOL_NAME for c in calls)
    work = lead.goal_id if lead.goal_id and not goal_unit and _droppable(lead, u, last) else None
    return _UnitInfo(u, goal_unit, work, _finishers(scan, u, lead) if u.calls else ())


def _finishers(scan: Scan, u: Unit, lead: Message) -> tuple[tuple[int, tuple[str, ...]], ...]:
    by_call: dict[str, list[str]] = {}
    for call in lead.tool_calls:
        if call.name == TOOL_NAME:
            gid = _finished_by(call.arguments, lead.goal_id)
            if gid is not None:
                by_call.setdefault(call.id, []).append(gid)
    if not by_call:
        return ()
    out = []
    for j in range(u.start + 1, u.end):
        res = scan.msgs[j]
        if res is not None and res.tool_call_id in by_call:
            out.append((res.sequence, tuple(by_call[res.tool_call_id])))
    return tuple(out)


class _GoalFold:
    """Goal compaction so far, over the units that can no longer grow (all but the
    last): the goal units, each goal's runs of droppable work, the finishing results."""

    def __init__(self) -> None:
        self.done = 0
        self.units = 0
        self.goal_units: list[_UnitInfo] = []
        self.work: dict[str, list[list[int]]] = {}
        """Goal id → runs ``[first, end)`` of its droppable units (unit indexes)."""
        self.finishers: list[tuple[int, tuple[str, ...]]] = []
        self.markers: dict[tuple[str, tuple[tuple[int, int], ...]], list[str]] = {}
        """Fact lines of a marker, by goal and the item ranges that left with it."""
        self.memo: _GoalMemo | None = None
        self.targets: tuple[GoalTree, tuple[str, ...] | None, frozenset[str]] | None = None
        """The last tree and goal ids asked for, and their finished targets."""

    def targets_in(self, tree: GoalTree, goal_ids: tuple[str, ...] | None) -> frozenset[str]:
        """The finished goals among ``goal_ids`` (``None``: all), remembered for the tree
        (a value: each change is a new tree), so the next step of a run with the same
        records does not walk every goal again (their number grows with the history)."""
        got = self.targets
        if got is not None and got[0] is tree and got[1] == goal_ids:
            return got[2]
        wanted = set(goal_ids) if goal_ids is not None else set(tree.finished_ids())
        targets = frozenset(g.id for g in tree.goals if g.id in wanted and g.finished)
        self.targets = (tree, goal_ids, targets)
        return targets

    def extend(self, scan: Scan) -> None:
        """``_unit_info`` of each unit, kept only for goal units: the others add to a run
        of work or to nothing (only a goal call finishes a goal), so no record is made
        for them."""
        units, msgs = scan.units, scan.msgs
        for n in range(self.units, len(units) - 1):
            u = units[n]
            lead = msgs[u.start]
            if lead is None:
                continue
            if lead.tool_calls and any(c.name == TOOL_NAME for c in lead.tool_calls):
                info = _unit_info(scan, n, False)
                assert info is not None
                self.goal_units.append(info)
                self.finishers.extend(info.finishers)
            elif lead.goal_id and _droppable(lead, u, False):
                runs = self.work.setdefault(lead.goal_id, [])
                if runs and runs[-1][1] == n:
                    runs[-1][1] = n + 1
                else:
                    runs.append([n, n + 1])
        self.units = max(self.units, len(units) - 1)


def _finishing(fold: _GoalFold, last: _UnitInfo | None, targets: set[str]) -> dict[int, str]:
    """Sequence of each tool result that finished a target goal → that goal's id."""
    out: dict[int, str] = {}
    for seq, gids in (*fold.finishers, *(last.finishers if last else ())):
        for gid in reversed(gids):
            if gid in targets:
                out[seq] = gid
                break
    return out


def _dropped_ranges(
    scan: Scan, fold: _GoalFold, last: _UnitInfo | None, owner: dict[str, str]
) -> dict[str, list[tuple[int, int]]]:
    """Target goal → the item ranges of its (and its subgoals') work, in context order."""
    us = scan.units
    out: dict[str, list[tuple[int, int]]] = {}
    for gid, runs in fold.work.items():
        target = owner.get(gid)
        if target is not None:
            out.setdefault(target, []).extend((us[a].start, us[b - 1].end) for a, b in runs)
    if last is not None and last.work_of is not None and last.work_of in owner:
        out.setdefault(owner[last.work_of], []).append((last.unit.start, last.unit.end))
    for ranges in out.values():
        ranges.sort()
    return out


def _rewrites(
    scan: Scan,
    fold: _GoalFold,
    last: _UnitInfo | None,
    finishing: dict[int, str],
    owner: dict[str, str],
    gone: dict[str, list[tuple[int, int]]],
    tree: GoalTree,
) -> dict[int, ContextItem]:
    """Index → the new item, for the goal units' results that change."""
    edits: dict[int, ContextItem] = {}
    units = [*fold.goal_units, *([last] if last is not None and last.goal_unit else [])]
    for info in units:
        for i in range(info.unit.start, info.unit.end):
            item = scan.items[i]
            new = _rewrite(item, scan, i, finishing, owner, fold, gone, tree)
            if new is not item and item.sequence is not None:
                edits[i] = new
    return edits


def _assemble(
    items: Sequence[ContextItem], spans: list[tuple[int, int]], edits: dict[int, ContextItem]
) -> tuple[ContextItem, ...]:
    """``items`` without the ``spans`` and with the ``edits`` (none inside a span)."""
    out: list[ContextItem] = []
    pos = 0
    at = sorted(edits)
    k = 0
    for lo, hi in (*spans, (len(items), len(items))):
        while k < len(at) and at[k] < lo:
            out += items[pos : at[k]]
            out.append(edits[at[k]])
            pos, k = at[k] + 1, k + 1
        out += items[pos:lo]
        pos = hi
    return tuple(out)


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
    scan: Scan,
    index: int,
    finishing: dict[int, str],
    owner: dict[str, str],
    fold: _GoalFold,
    gone: dict[str, list[tuple[int, int]]],
    tree: GoalTree,
) -> ContextItem:
    msg = scan.msgs[index]
    if msg is None or msg.role != "tool" or item.content is not None:
        return item
    gid = finishing.get(msg.sequence)
    if gid is not None:
        goal = tree.get(gid)
        lines = [marker(gid, goal.status if goal else "completed")]
        # the goal's own done summary states its completion: no per-call Done lines
        lines += _marker_facts(scan, fold, gid, tuple(gone.get(gid, ())))
        return ContextItem(item.sequence, "\n".join(lines), item.role, item.kind)
    if msg.name != TOOL_NAME and msg.goal_id in owner and msg.name is not None:
        text = placeholder(msg.name, msg)  # a parallel non-goal call beside a goal call
        if len(text) < len(msg.content):
            return ContextItem(item.sequence, text, item.role, item.kind)
    return item


def _marker_facts(
    scan: Scan, fold: _GoalFold, gid: str, ranges: tuple[tuple[int, int], ...]
) -> list[str]:
    """Fact lines of what left with a goal (memoized: the same ranges of a grown context
    hold the same items)."""
    key = (gid, ranges)
    lines = fold.markers.get(key)
    if lines is None:
        facts = FactFold(done_calls=False)
        facts.add_spans(scan.items, scan.messages, ranges, scan.msgs)
        lines = fold.markers[key] = render(facts.facts(), done=False)
    return lines
