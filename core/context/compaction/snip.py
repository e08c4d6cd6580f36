"""Snip (SPEC CMP-2, seed B L0): over ``max_messages``, keep the head and the tail.

The first ``head_keep`` messages (extended to the end of their unit) stay, the oldest
middle units go, and one placeholder takes their place: how many messages were snipped,
the refs, constraints and failures they held, and the goal plan when goal calls left. The
cut removes a multiple of ``step`` messages, so the contexts between two cuts are plain
appends, and moves forward to the next unit boundary (a call leaves with all of its
results); after a cut at most ``max_messages`` remain, so a second snip changes nothing.
The last unit always stays. A later snip merges the old placeholder into the new one,
carrying its facts forward.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from core.context.compaction.config import SnipParams
from core.context.compaction.facts import FactFold, Facts, render
from core.context.compaction.result import LayerResult, unchanged
from core.context.compaction.scan import ContextState, Scan, scan_of
from core.context.compaction.summary_state import Records
from core.context.compaction.units import cut_after
from core.context.view import View
from core.goals.tool import TOOL_NAME
from core.goals.tree import GoalTree
from core.goals.views import compact_view
from core.records import ContextItem
from core.tokens import default_counter

_COUNT = re.compile(r"^\[Snipped (\d+) earlier messages\]")
#: Fact lines per part of a placeholder (``render``'s ``group``).
_GROUP = 16


def is_snip_placeholder(item: ContextItem) -> bool:
    return item.sequence is None and item.kind == "placeholder"


def snip(
    view: View, records: Records, params: SnipParams, state: ContextState | None = None
) -> LayerResult:
    items, msgs = view.items, view.messages
    scan = scan_of(view, state)
    fold = scan.fold("snip", _SnipFold)
    marks = fold.marks
    if len(items) - len(marks) <= params.max_messages:
        return unchanged("snip", items, f"at most {params.max_messages} messages")
    head_end = cut_after(items, msgs, params.head_keep, scan.msgs)  # its last unit stays whole
    tail = min(params.tail_keep, params.max_messages - head_end)
    body_marks = marks[bisect_left(marks, head_end) :]
    excess = len(items) - head_end - len(body_marks) - max(0, tail)
    if excess <= 0:
        return unchanged("snip", items, "the tail is within tail_keep")
    step = max(1, params.step)
    target = _index_after(head_end, -(-excess // step) * step, body_marks, len(items))
    last = scan.units[-1] if scan.units else None
    cut = min(cut_after(items, msgs, target, scan.msgs), last.start if last is not None else 0)
    removed, marker = fold.cut(scan, records, head_end, cut, params.max_refs)
    if not removed and not any(
        i.sequence is None and not is_snip_placeholder(i) for i in items[head_end:cut]
    ):
        return unchanged("snip", items, "no safe cut in the middle")
    return LayerResult(
        "snip", (*items[:head_end], marker, *items[cut:]), removed=removed, details={"added": 1}
    )


class _SnipFold:
    """snip so far: placeholder indexes, items holding goal calls, stored items, and the
    facts of the run of items after the head (extended as the cut moves forward)."""

    def __init__(self) -> None:
        self.done = 0
        self.marks: list[int] = []
        self.goal_calls: list[int] = []
        self.stored: list[int] = []
        """Indexes of items that show a stored message, and their sequences:"""
        self.sequence: list[int] = []
        self.facts: tuple[int, int, FactFold] | None = None
        """``(lo, hi, facts of items[lo:hi])``."""
        self.last: tuple[tuple[int, int, int, GoalTree], tuple[int, ...], ContextItem] | None = None
        self.view: tuple[GoalTree, str] | None = None

    def extend(self, scan: Scan) -> None:
        items, msgs = scan.items, scan.msgs
        for i in range(self.done, len(items)):
            item, msg = items[i], msgs[i]
            if item.sequence is None:
                if item.kind == "placeholder":
                    self.marks.append(i)
                continue
            self.stored.append(i)
            self.sequence.append(item.sequence)
            if (
                msg is not None
                and msg.tool_calls
                and any(c.name == TOOL_NAME for c in msg.tool_calls)
            ):
                self.goal_calls.append(i)

    def cut(
        self, scan: Scan, records: Records, lo: int, hi: int, max_refs: int
    ) -> tuple[tuple[int, ...], ContextItem]:
        """What a cut of ``items[lo:hi]`` removes and the placeholder that replaces it
        (the cut moves in steps, so most calls of a growing context ask the same again)."""
        key = (lo, hi, max_refs, records.goals)
        if self.last is None or self.last[0] != key:
            parts = _placeholder_parts(scan, self, records, lo, hi, max_refs)
            # counted now from its parts (the compactor counts the output next): only the
            # parts that changed since the last cut are encoded, not the whole placeholder
            default_counter().count_joined(parts)
            marker = ContextItem(None, "".join(parts), "user", "placeholder")
            self.last = (key, self.sequences(lo, hi), marker)
        return self.last[1], self.last[2]

    def plan(self, tree: GoalTree) -> str:
        """``compact_view(tree)``, written again only for a new tree (a value)."""
        if self.view is None or self.view[0] is not tree:
            self.view = (tree, compact_view(tree))
        return self.view[1]

    def sequences(self, lo: int, hi: int) -> tuple[int, ...]:
        stored = self.stored
        return tuple(self.sequence[bisect_left(stored, lo) : bisect_left(stored, hi)])

    def facts_of(self, scan: Scan, lo: int, hi: int) -> Facts:
        got = self.facts
        if got is None or got[0] != lo or got[1] > hi:
            got = (lo, lo, FactFold())
        fold = got[2]
        fold.add(scan.items, scan.messages, got[1], hi, scan.msgs)
        self.facts = (lo, hi, fold)
        return fold.facts()


def _index_after(start: int, count: int, marks: list[int], size: int) -> int:
    """Index just past ``count`` non-placeholder items from ``start`` (``marks``: the
    placeholder indexes at or after ``start``, ascending)."""
    end = start + count
    for m in marks:
        if m < end:
            end += 1
    return min(end, size)


def _placeholder_parts(
    scan: Scan, fold: _SnipFold, records: Records, lo: int, hi: int, max_refs: int
) -> list[str]:
    """The placeholder's text in parts, each but the last ending with its newline: the
    count line, the fact lines in groups of ``_GROUP`` (``render``) and the goal plan.
    Between two cuts of a growing context the groups of earlier facts do not change."""
    marks = fold.marks[bisect_left(fold.marks, lo) : bisect_left(fold.marks, hi)]
    count = hi - lo - len(marks)
    goal_calls = bisect_left(fold.goal_calls, lo) < bisect_left(fold.goal_calls, hi)
    for n in marks:
        content = scan.items[n].content or ""
        m = _COUNT.match(content)
        count += int(m.group(1)) if m else 0
        goal_calls = goal_calls or "\nGoals:\n" in content
    facts = fold.facts_of(scan, lo, hi)
    lines = [f"[Snipped {count} earlier messages]", *render(facts, max_refs, group=_GROUP)]
    if goal_calls and records.goals.goals:
        lines += ["Goals:", fold.plan(records.goals)]
    return [line + "\n" for line in lines[:-1]] + lines[-1:]
