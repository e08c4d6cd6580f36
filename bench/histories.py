"""Synthetic agent histories for compaction benchmarks and property tests.

``History`` builds a run message by message (user turns, parallel tool calls with shuffled
and duplicate results, ``goal`` calls applied through the real goal tool, injected skills,
a pending call at the end) and materializes it in memory (``view()``, ``records()``) or in
a store (``store_into``). ``generate(draw)`` picks the steps with any integer source: a
``random.Random`` for benchmarks, Hypothesis' ``draw`` for tests (so failures shrink).
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.context.compaction.summary_state import Records
from core.context.compaction.units import Unit
from core.context.view import View
from core.goals import GoalTree, apply_goal_call
from core.records import ContextItem, GoalEvent, Message, NewMessage, ToolCall
from core.store import Store
from core.tokens import count_message

Draw = Callable[[int, int], int]

TOOLS = ("read_file", "bash", "fetch", "search")
TEXTS = (
    "ok",
    "Found 3 matches in src/pkg/mod.py and src/pkg/util.py.",
    "See https://docs.example.com/api/v2/items for the schema.",
    "Window win-1001 shows the peak; entity-9182 is the top risk.",
    "Error: connection reset while fetching https://api.example.com/v1/data",
    "ValueError: column 'ts' missing in /data/events.csv",
    "def handler(event):\n    return process(event)\n" * 12,
    "Aggregated 30 days over 500000 entities; top 10 locked. " * 8,
)
TITLES = (
    "Query the 30-day aggregate",
    "Lock the top 10",
    "Fetch evidence windows",
    "Write the report",
    "Check the schema",
    "Fix the parser",
)
CONSTRAINTS = (
    "Every conclusion must cite an evidence window",
    "Never modify /etc/hosts",
    "Answer in English",
)


@dataclass
class History:
    trace_id: str = "t"
    new: list[NewMessage] = field(default_factory=list)
    events: list[GoalEvent] = field(default_factory=list)
    tree: GoalTree = field(default_factory=GoalTree)
    _next_call: int = 0
    unique: bool = False
    """Suffix every tool output with its call id (distinct texts)."""

    def _add(self, msg: NewMessage) -> int:
        self.new.append(replace(msg, goal_id=msg.goal_id or self.tree.focus))
        return len(self.new) - 1

    def system(self, text: str = "You are a careful research agent.\n\nWork step by step.") -> None:
        self._add(NewMessage("system", text, kind="system_prompt"))

    def user(self, text: str, constraints: Sequence[str] = ()) -> None:
        meta = {"constraints": list(constraints)} if constraints else None
        self._add(NewMessage("user", text, metadata=meta))

    def assistant(self, text: str) -> None:
        self._add(NewMessage("assistant", text))

    def calls(
        self,
        calls: Sequence[tuple[str, dict[str, Any], str]],
        answered: Sequence[int] | None = None,
        duplicates: Sequence[int] = (),
        order: Sequence[int] | None = None,
        kind: str = "message",
        text: str = "",
    ) -> None:
        """One assistant message with parallel calls, then the results (``answered``
        indexes, default all; ``duplicates`` answered twice; in ``order``)."""
        tcs = []
        for name, args, _ in calls:
            tcs.append(ToolCall(f"call_{self._next_call}", name, json.dumps(args, sort_keys=True)))
            self._next_call += 1
        focus = self.tree.focus
        seq = self._add(NewMessage("assistant", text, tool_calls=tuple(tcs), kind=kind))
        results = []
        for tc, (name, args, out) in zip(tcs, calls):
            if name == "goal":
                res = apply_goal_call(self.tree, args, self.trace_id, seq)
                self.tree = res.tree
                self.events.extend(res.events)
                out = res.text
            if self.unique and name != "goal":
                out = f"{out}\n(output {self._next_call})"
            results.append(
                NewMessage("tool", out, tool_call_id=tc.id, name=name, kind=kind, goal_id=focus)
            )
        idx = list(range(len(calls))) if answered is None else list(answered)
        idx += [d for d in duplicates if d in idx]
        if order is not None:  # a Fisher-Yates shuffle driven by the given draws
            for i in range(len(idx) - 1, 0, -1):
                j = order[i % len(order)] % (i + 1)
                idx[i], idx[j] = idx[j], idx[i]
        for i in idx:
            self._add(results[i])

    def goal(self, **args: Any) -> None:
        self.calls([("goal", args, "")])

    # -- materializing --------------------------------------------------------------------
    def messages(self) -> list[Message]:
        out = []
        for seq, nm in enumerate(self.new):
            tokens = count_message(nm.role, nm.content, nm.tool_calls, nm.name).tokens
            out.append(
                Message(
                    self.trace_id,
                    seq,
                    seq - 1 if seq else None,
                    nm.role,
                    nm.content,
                    None,
                    nm.tool_calls,
                    nm.tool_call_id,
                    nm.name,
                    nm.goal_id,
                    nm.kind,
                    None,
                    None,
                    "main",
                    tokens,
                    None,
                    0.0,
                    nm.metadata,
                )
            )
        return out

    def view(self) -> View:
        msgs = self.messages()
        return View(tuple(ContextItem(m.sequence) for m in msgs), {m.sequence: m for m in msgs})

    def records(self) -> Records:
        return Records.from_messages(self.messages(), goals=self.tree)

    def store_into(self, store: Store, title: str = "synthetic") -> str:
        with store.write() as w:
            tr = w.create_trace(title)
            stored = w.append(tr.id, self.new)
            for ev in self.events:
                w.add_goal_event(replace(ev, trace_id=tr.id, sequence=stored[ev.sequence].sequence))
        return tr.id


def generate(
    draw: Draw,
    steps: int,
    pending_end: bool = True,
    system: bool = True,
    realistic: bool = False,
) -> History:
    """A run of ``steps`` steps. ``realistic``: fewer goal operations (1 in 20 steps, not 3
    in 10) and a unique suffix on every tool output, so no two outputs share a text (no
    memo helps a benchmark that should be cold)."""
    h = History()
    h.unique = realistic
    if system:
        h.system()
    h.user(
        "Find the top 10 risk entities over 30 days. Constraint: Answer in English",
        [CONSTRAINTS[draw(0, len(CONSTRAINTS) - 1)]],
    )
    for _ in range(steps):
        kind = draw(0, 9)
        if realistic and 6 <= kind <= 8 and draw(0, 5):
            kind = 2
        if kind == 0:
            h.user(TEXTS[draw(0, len(TEXTS) - 1)], [CONSTRAINTS[draw(0, 2)]] if draw(0, 1) else [])
        elif kind == 1:
            h.assistant(TEXTS[draw(0, len(TEXTS) - 1)])
        elif kind <= 5:
            _tools(h, draw, pending=False)
        elif kind <= 8:
            _goal_step(h, draw)
        else:
            name = ("ask_strategy", "upload_strategy")[draw(0, 1)]
            h.calls([("skill", {"name": name}, f"# {name}\n" + TEXTS[6])], kind="injected_skill")
    if pending_end and draw(0, 1):
        _tools(h, draw, pending=True)
    return h


def _tools(h: History, draw: Draw, pending: bool) -> None:
    k = draw(1, 3)
    calls = []
    for _ in range(k):
        name = TOOLS[draw(0, len(TOOLS) - 1)]
        n = draw(0, 9)
        args = {"path": f"/src/mod_{n}.py"} if name == "read_file" else {"q": str(n)}
        calls.append((name, args, TEXTS[draw(0, len(TEXTS) - 1)]))
    answered = list(range(k)) if not pending else list(range(draw(0, k - 1)))
    dups = [draw(0, k - 1)] if draw(0, 3) == 0 else []
    order = [draw(0, 5) for _ in range(len(answered) + len(dups))] if draw(0, 1) else None
    h.calls(calls, answered, dups, order)


def _goal_step(h: History, draw: Draw) -> None:
    tree = h.tree
    open_ids = [g.id for g in tree.goals if not g.finished]
    op = draw(0, 4)
    title = TITLES[draw(0, len(TITLES) - 1)]
    if op == 0 or not open_ids:
        h.goal(add=title)
    elif op == 1:
        h.goal(add=title, under=open_ids[draw(0, len(open_ids) - 1)])
    elif op == 2:
        h.goal(focus=open_ids[draw(0, len(open_ids) - 1)])
    elif op == 3:
        h.goal(done=open_ids[draw(0, len(open_ids) - 1)], summary=f"{title} finished")
    else:
        h.goal(abandon=open_ids[draw(0, len(open_ids) - 1)], reason="not needed")


# -- the planted-facts history (contract retention, tests and benchmark) -------------------
PLANTED_GOAL = "Build the Top 10 risk report for Q3."
PLANTED_CONSTRAINT_META = "Every conclusion must cite an evidence window"
PLANTED_CONSTRAINT_LINE = "Never rerun the aggregate query"
PLANTED_PATH = "/srv/data/agg_2024.parquet"
PLANTED_IDS = ("win-1001", "entity-9182")
PLANTED_URL = "https://metrics.example.org/q3/agg"
PLANTED_DONE = "Query the 30-day aggregate"
PLANTED_PENDING = "Fetch evidence windows"
PLANTED_FAILURE = "Error: TimeoutError contacting https://evidence.example.org/win-1002"
PLANTED = (
    PLANTED_GOAL,
    PLANTED_CONSTRAINT_META,
    PLANTED_CONSTRAINT_LINE,
    PLANTED_PATH,
    *PLANTED_IDS,
    PLANTED_URL,
    PLANTED_DONE,
    PLANTED_PENDING,
    PLANTED_FAILURE,
)
FILLER = "log line without anything to keep " * 40


def planted_history(filler_steps: int = 12) -> History:
    """A run with every contract fact planted once, buried in filler work."""
    h = History()
    h.system()
    h.user(PLANTED_GOAL, constraints=[PLANTED_CONSTRAINT_META])
    h.goal(add=[PLANTED_DONE, PLANTED_PENDING])
    out = f"rows: peak in {PLANTED_IDS[0]}, top {PLANTED_IDS[1]}; see {PLANTED_URL}"
    h.calls([("read_file", {"path": PLANTED_PATH}, out)])
    for k in range(filler_steps):
        h.calls([("bash", {"q": f"step {k}"}, FILLER)])
    h.user(f"Constraint: {PLANTED_CONSTRAINT_LINE}")
    h.calls([("fetch", {"q": "evidence"}, PLANTED_FAILURE + "\n  at fetch()")])
    h.goal(done="1", summary="aggregate queried")
    for k in range(filler_steps):
        h.assistant(f"thinking step {k}: " + FILLER)
        h.calls([("search", {"q": f"s{k}"}, FILLER)])
    return h


# -- cut points by the unit list (the definition the product's local search must meet) ----
def safe_cut(unit_list: Sequence[Unit], index: int) -> int:
    """The nearest safe cut at or before ``index`` (seed B ``find_safe_cut_point``): a cut
    inside a unit moves back to its start, keeping the call with all of its results."""
    starts = _starts(unit_list)
    return starts[max(0, bisect_right(starts, index) - 1)]


def safe_cut_after(unit_list: Sequence[Unit], index: int) -> int:
    """The nearest safe cut at or after ``index`` (what ``units.py:cut_after`` finds
    without splitting the whole context)."""
    starts = _starts(unit_list)
    return starts[min(bisect_left(starts, index), len(starts) - 1)]


def _starts(unit_list: Sequence[Unit]) -> list[int]:
    """Every index where a cut is safe: the unit starts, plus the end."""
    return [*(u.start for u in unit_list), unit_list[-1].end if unit_list else 0]
