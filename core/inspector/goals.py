"""The goals pane's rows (UI-3): the GoalTree as of the head, with message counts per goal.

Statuses, focus, titles and summaries come from ``core.goals`` (the recorded goal events
replayed up to the head, so a rewind past a ``goal`` call forgets it). Counts are the
main-path messages that recorded each goal. Imported traces have no goal events, only goal
ids on their messages: those ids still give the tree's shape ("1.2" under "1"), with an
unknown status.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.goals import GoalTree, goal_tree_at
from core.store.reader import Reader

STATUS_LABELS = {
    "pending": "pending",
    "in_progress": "in progress",
    "completed": "completed",
    "abandoned": "abandoned",
    "": "—",
}


@dataclass(frozen=True, slots=True)
class GoalNode:
    id: str
    parent: str | None
    messages: int
    tokens: int
    status: str = ""
    """pending | in_progress | completed | abandoned; empty when only the id is known."""
    title: str = ""
    focus: bool = False
    summary: str = ""
    """What a completed goal achieved, or why an abandoned one was dropped."""
    total_messages: int | None = None
    """With its sub-goals (what filtering the timeline by it shows); ``None``: not summed."""
    total_tokens: int | None = None

    @property
    def shown_messages(self) -> int:
        """The pane's count: the goal with its sub-goals, so a parent never reads 0 while
        its sub-goal holds the messages."""
        return self.messages if self.total_messages is None else self.total_messages

    @property
    def shown_tokens(self) -> int:
        return self.tokens if self.total_tokens is None else self.total_tokens

    @property
    def status_label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)

    def detail(self) -> str:
        """One line for the pane's detail strip and the tooltip."""
        head = f"{self.id} {self.title}".strip()
        parts = [head, self.status_label if self.status else "status unknown (no goal events)"]
        if self.focus:
            parts.append("in focus")
        parts.append(f"{self.messages:,} messages, {self.tokens:,} tokens on the main path")
        if self.shown_messages != self.messages:
            sub = (
                f"{self.shown_messages:,} messages, {self.shown_tokens:,} tokens with its sub-goals"
            )
            parts.append(sub)
        text = " · ".join(parts)
        if self.summary:
            label = "summary" if self.status == "completed" else "reason"
            text += f"\n{label}: {self.summary}"
        return text


def goal_key(goal_id: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key: numeric parts numerically ("1.10" after "1.9")."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in goal_id.split("."))


def parent_of(goal_id: str) -> str | None:
    return goal_id.rsplit(".", 1)[0] if "." in goal_id else None


def goal_outline(
    reader: Reader, trace_id: str, head: int | None = None, tree: GoalTree | None = None
) -> list[GoalNode]:
    """Goals in tree order (parents before children): the recorded tree first, then ids
    seen only on messages (with their missing ancestors), sorted by id. ``tree``: the
    GoalTree at ``head`` when the caller has it already (playback)."""
    if tree is None:
        tree = goal_tree_at(reader, trace_id, head)
    segs = reader.segments(trace_id, head)
    counts = {g: (n, tok) for g, n, tok in reader.goal_counts(trace_id, segs)}
    nodes = [_node(tree, g.id, counts) for g in tree.goals]
    known = {n.id for n in nodes}
    extra: set[str] = set()
    for g in counts:
        p: str | None = g
        while p is not None and p not in known:
            extra.add(p)
            p = parent_of(p)
    for g in sorted(extra, key=goal_key):
        nodes.append(GoalNode(g, parent_of(g), *counts.get(g, (0, 0))))
    return with_totals(nodes)


def with_totals(nodes: list[GoalNode]) -> list[GoalNode]:
    """Each node with its sub-goals' messages and tokens summed in (one pass per node; a
    goal tree has tens of goals)."""
    return [
        replace(
            n,
            total_messages=subtree_messages(nodes, n.id),
            total_tokens=sum(m.tokens for m in _subtree(nodes, n.id)),
        )
        for n in nodes
    ]


def _subtree(nodes: list[GoalNode], goal_id: str) -> list[GoalNode]:
    prefix = goal_id + "."
    return [n for n in nodes if n.id == goal_id or n.id.startswith(prefix)]


def _node(tree: GoalTree, goal_id: str, counts: dict[str, tuple[int, int]]) -> GoalNode:
    g = tree.get(goal_id)
    assert g is not None
    n, tok = counts.get(g.id, (0, 0))
    return GoalNode(g.id, g.parent, n, tok, g.status, g.title, g.id == tree.focus, g.summary)


def subtree_messages(nodes: list[GoalNode], goal_id: str) -> int:
    """Messages of a goal and its sub-goals (what filtering the timeline by it shows)."""
    return sum(n.messages for n in _subtree(nodes, goal_id))
