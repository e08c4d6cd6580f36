"""The retention report of a compaction (SPEC CMP-8): which facts stay visible.

For each kind of fact, the ones visible before the compaction are split into ``kept``
(still visible after, anywhere: in a kept message, a placeholder, a marker or the summary)
and ``lost``. Visible means the exact string appears in what the model reads; a constraint
recorded in a user message's metadata also counts as visible while that message is shown
unchanged. A skill counts as kept only while its result is shown with its original content.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.context.compaction.facts import extract, find_refs, first_line, message_constraints
from core.context.compaction.items import call_arguments, calls_of, message_of, visible_text
from core.context.compaction.summary_state import Records
from core.context.view import View
from core.records import ContextItem, Message

#: The fields the summary contract guarantees (the retention goal is 100 % on these).
CONTRACT_FIELDS = ("task_goal", "refs", "constraints", "completed_steps", "pending", "failures")
SKILL_TOOLS = ("skill",)


@dataclass(frozen=True)
class Kept:
    kept: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        return {"kept": list(self.kept), "lost": list(self.lost)}


@dataclass(frozen=True)
class Retention:
    refs: Kept
    constraints: Kept
    completed_steps: Kept
    skills: Kept
    task_goal: Kept
    pending: Kept
    failures: Kept

    def to_json(self) -> dict[str, Any]:
        names = (
            "refs",
            "constraints",
            "completed_steps",
            "skills",
            "task_goal",
            "pending",
            "failures",
        )
        return {n: getattr(self, n).to_json() for n in names}

    def ratio(self, fields: Iterable[str] = CONTRACT_FIELDS) -> float:
        """Share of visible facts kept over the given fields (1.0 when there were none)."""
        kept = sum(len(getattr(self, f).kept) for f in fields)
        total = kept + sum(len(getattr(self, f).lost) for f in fields)
        return kept / total if total else 1.0


def retention_report(before: View, after: View, records: Records) -> Retention:
    text_b, text_a = _text(before), _text(after)
    meta_b, meta_a = _meta_constraints(before), _meta_constraints(after)
    facts = extract(before.items, before.messages)
    refs = list(dict.fromkeys([*find_refs(text_b), *(r for r in records.ledger if r in text_b)]))
    constraints = list(dict.fromkeys([*records.constraints, *facts.constraints]))
    failures = list(
        dict.fromkeys([*(f.text for f in records.failures), *(f.text for f in facts.failures)])
    )
    goal = first_line(records.task)
    return Retention(
        refs=_split(refs, text_b, text_a),
        constraints=_split(constraints, text_b, text_a, meta_b, meta_a),
        completed_steps=_split(records.completed_titles(), text_b, text_a),
        skills=_skills(before, after),
        task_goal=_split([goal] if goal else [], text_b, text_a),
        pending=_split(records.pending_titles(), text_b, text_a),
        failures=_split(failures, text_b, text_a),
    )


def _split(
    values: Iterable[str],
    before: str,
    after: str,
    shown_before: frozenset[str] = frozenset(),
    shown_after: frozenset[str] = frozenset(),
) -> Kept:
    kept: list[str] = []
    lost: list[str] = []
    for v in dict.fromkeys(values):
        if v in before or v in shown_before:
            (kept if v in after or v in shown_after else lost).append(v)
    return Kept(tuple(kept), tuple(lost))


def _text(view: View) -> str:
    return "\n".join(visible_text(i, view.messages) for i in view.items)


def _meta_constraints(view: View) -> frozenset[str]:
    out: set[str] = set()
    for item in view.items:
        msg = message_of(item, view.messages)
        if msg is not None and msg.role == "user" and item.content is None:
            out.update(message_constraints(msg))
    return frozenset(out)


def skills_shown(items: Iterable[ContextItem], messages: Mapping[int, Message]) -> list[str]:
    """Skills whose result is in the context with its original content."""
    names: dict[str, str] = {}
    shown: list[str] = []
    for item in items:
        for call in calls_of(item, messages):
            if call.name in SKILL_TOOLS:
                args = call_arguments(call)
                names[call.id] = str(args.get("name") or args.get("skill") or "")
        msg = message_of(item, messages)
        if msg is not None and msg.role == "tool" and item.content is None:
            name = names.get(msg.tool_call_id or "")
            if name and name not in shown:
                shown.append(name)
    return shown


def _skills(before: View, after: View) -> Kept:
    b = skills_shown(before.items, before.messages)
    a = set(skills_shown(after.items, after.messages))
    return Kept(tuple(s for s in b if s in a), tuple(s for s in b if s not in a))
