"""The runtime's own records of a run: what a summary must carry (SPEC CMP-5).

A summary's state parts are never left to the model: the task, completed steps, pending
items, constraints, key refs and failures come from here. ``Records`` is built in one pass
over the main path (``from_messages``) or from the store (``load_records``), so it still
knows what earlier compactions took out of the context.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.context.compaction.facts import first_line, is_failure, message_constraints
from core.goals.replay import goal_tree_at
from core.goals.tool import TOOL_NAME, apply_goal_call
from core.goals.tree import GoalTree
from core.records import Message
from core.store.reader import Reader

#: Kinds that are the runtime's own additions, not the user's words.
_NOT_USER_TEXT = frozenset(
    {"summary", "placeholder", "identity", "file_restore", "task_state"}
    | {"nudge", "notice", "injected_context", "injected_skill", "grant", "meta"}
)
"""Role-user kinds the runtime writes (blocks, reminders, grants): never "what the user
asked", so neither the task nor the latest user request of a summary."""


@dataclass(frozen=True, slots=True)
class FailureRecord:
    tool: str
    text: str
    """First line of the latest error: the exact string a summary must keep."""
    sequence: int
    attempts: int = 1
    resolved: bool = False
    """A later call of the same tool with the same arguments succeeded."""

    def line(self) -> str:
        state = "resolved by a retry" if self.resolved else "unresolved"
        return f"{self.tool}: {self.text} ({self.attempts} attempt(s), {state})"


@dataclass(frozen=True, slots=True)
class TaskRecord:
    id: str
    content: str
    status: str


@dataclass(frozen=True)
class Records:
    goals: GoalTree = field(default_factory=GoalTree)
    task: str = ""
    """The first user message: the task as the user stated it."""
    latest_user: str = ""
    constraints: tuple[str, ...] = ()
    """User constraints, ordered by their latest mention (most recent last)."""
    ledger: tuple[str, ...] = ()
    """Ids of ContextRefs kept outside the context (REF-1)."""
    failures: tuple[FailureRecord, ...] = ()
    tasks: tuple[TaskRecord, ...] = ()
    knowledge: tuple[str, ...] = ()
    """Knowledge awaiting evaluation (reflection notes no ``knowledge_eval`` judged yet):
    a summary then runs a ``knowledge_eval`` stage over it (seed A)."""

    def task_goal(self) -> str:
        parts = [self.task[:600]] if self.task else []
        roots = [g.title for g in self.goals.children(None)]
        if roots:
            parts.append("Goals: " + "; ".join(roots))
        return "\n".join(parts)

    def completed_steps(self) -> tuple[str, ...]:
        done = [f"{g.id} {g.title}" for g in self.goals.goals if g.status == "completed"]
        done += [t.content for t in self.tasks if t.status == "completed"]
        return tuple(done)

    def completed_titles(self) -> tuple[str, ...]:
        """The exact strings a retention check looks for."""
        titles = [g.title for g in self.goals.goals if g.status == "completed"]
        return tuple(titles + [t.content for t in self.tasks if t.status == "completed"])

    def pending_items(self) -> tuple[str, ...]:
        goals = [g for g in self.goals.goals if g.status in ("pending", "in_progress")]
        out = [f"{g.id} {g.title} ({g.status.replace('_', ' ')})" for g in goals]
        out += [f"{t.content} ({t.status})" for t in self.tasks if t.status != "completed"]
        return tuple(out)

    def pending_titles(self) -> tuple[str, ...]:
        titles = [g.title for g in self.goals.goals if g.status in ("pending", "in_progress")]
        return tuple(titles + [t.content for t in self.tasks if t.status != "completed"])

    @classmethod
    def from_messages(
        cls,
        messages: Iterable[Message],
        goals: GoalTree | None = None,
        ledger: Sequence[str] = (),
        tasks: Sequence[TaskRecord] = (),
        max_constraints: int = 20,
        max_failures: int = 10,
    ) -> Records:
        """One pass over main-path messages (oldest first). Without ``goals`` the tree is
        rebuilt by replaying the ``goal`` tool calls found in the messages."""
        msgs = list(messages)
        task, latest = "", ""
        constraints: dict[str, None] = {}
        for m in msgs:
            if m.role != "user" or m.kind in _NOT_USER_TEXT:
                continue
            task = task or m.content
            latest = m.content
            for c in message_constraints(m):
                constraints.pop(c, None)
                constraints[c] = None
        kept = tuple(constraints)[-max_constraints:] if max_constraints else ()
        return cls(
            goals=goals if goals is not None else tree_from_calls(msgs),
            task=task,
            latest_user=latest,
            constraints=kept,
            ledger=tuple(ledger),
            failures=_failures(msgs)[-max_failures:] if max_failures else (),
            tasks=tuple(tasks),
        )


def tree_from_calls(messages: Iterable[Message]) -> GoalTree:
    """Replay ``goal`` tool calls (for traces without recorded goal events)."""
    tree = GoalTree()
    for m in messages:
        for call in m.tool_calls:
            if call.name == TOOL_NAME:
                tree = apply_goal_call(tree, call.arguments, m.trace_id, m.sequence).tree
    return tree


def _failures(messages: Sequence[Message]) -> tuple[FailureRecord, ...]:
    calls: dict[str, tuple[str, str]] = {}
    by_key: dict[tuple[str, str], FailureRecord] = {}
    for m in messages:
        for c in m.tool_calls:
            calls[c.id] = (c.name, c.arguments)
        if m.role != "tool":
            continue
        key = calls.get(m.tool_call_id or "", (m.name or "tool", ""))
        old = by_key.get(key)
        if is_failure(m):
            attempts = old.attempts + 1 if old is not None and not old.resolved else 1
            by_key.pop(key, None)
            by_key[key] = FailureRecord(key[0], first_line(m.content), m.sequence, attempts)
        elif old is not None and not old.resolved:
            by_key[key] = FailureRecord(old.tool, old.text, old.sequence, old.attempts, True)
    return tuple(by_key.values())


def main_path_messages(reader: Reader, trace_id: str, head: int | None = None) -> list[Message]:
    """The main path's messages that a model could see (no meta or thinking records)."""
    return [m for m in reader.iter_main_path(trace_id, head) if m.kind not in ("meta", "thinking")]


def load_records(
    reader: Reader,
    trace_id: str,
    head: int | None = None,
    messages: Sequence[Message] | None = None,
) -> Records:
    """Records of the main path to ``head`` (default: the trace's head); pass the path's
    ``messages`` when you already hold them."""
    msgs = list(messages) if messages is not None else main_path_messages(reader, trace_id, head)
    on_path = {m.sequence for m in msgs}
    ledger = [r.id for r in reader.refs(trace_id) if r.source_sequence in on_path]
    records = Records.from_messages(
        msgs, goal_tree_at(reader, trace_id, head), ledger, _latest_tasks(reader, trace_id, on_path)
    )
    calls = call_failures(reader.call_outcomes(trace_id), on_path)
    return replace(records, failures=records.failures + calls) if calls else records


def call_failures(
    outcomes: Sequence[Mapping[str, Any]], on_path: set[int]
) -> tuple[FailureRecord, ...]:
    """Model calls that failed (retries, the recovery ladder's steps) on this path: the
    summary contract's "failures and retries" keeps them too, not only tool errors."""
    out: list[FailureRecord] = []
    failing: FailureRecord | None = None
    steps: list[str] = []
    for row in outcomes:
        head = row.get("head_sequence")
        if head is not None and head not in on_path:
            continue
        steps += [s for s in (row.get("params") or {}).get("recovery") or () if s not in steps]
        if row.get("error"):
            text = _call_error_text(str(row["error"]))
            tries = failing.attempts + 1 if failing is not None else 1
            failing = FailureRecord("model call", text, int(head or 0), tries)
        elif failing is not None:
            done = f"{failing.text} (recovered by {', '.join(steps)})" if steps else failing.text
            out.append(replace(failing, text=done, resolved=True))
            failing, steps = None, []
    return tuple([*out, failing] if failing is not None else out)


def _call_error_text(error: str) -> str:
    try:
        data = json.loads(error)
    except json.JSONDecodeError:
        return first_line(error)
    if not isinstance(data, dict):
        return first_line(error)
    return f"{data.get('kind', 'error')}: {first_line(str(data.get('message', '')))}"


def _latest_tasks(reader: Reader, trace_id: str, on_path: set[int]) -> list[TaskRecord]:
    rows = [r for r in reader.table_rows("tasks", trace_id) if r["sequence"] in on_path]
    if not rows:
        return []
    last = max(int(r["sequence"]) for r in rows)
    return [
        TaskRecord(str(r["task_id"]), str(r["content"]), str(r["status"]))
        for r in rows
        if int(r["sequence"]) == last
    ]
