"""Caller skill injection and re-injection (SPEC INJ-3, seed A "Skill 指定注入").

A caller runs with ``inject_skills=[...]`` and ``skill_recency_threshold=10``. Before each
model call the runtime asks ``skills_to_inject``: a skill needs (re-)injection when no
record of it points at a message still visible in the context that will be submitted
(compacted away, or its content replaced by a placeholder) or when that message is older
than the recency window. Age is counted in the submitted list, never by sequence numbers:
a compaction that removes 40 messages makes a skill "younger".

An injection is a synthetic ``skill("name")`` assistant call plus its tool result, both of
kind ``injected_skill``, exactly what the model would see had it called the tool itself,
and a ``SkillInjection`` record (tool-result sequence, call sequence, reason).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.context.synthetic_call import call_and_result
from core.context.view import current_items
from core.records import ContextItem, Message, SkillInjection, ToolCall
from core.skills.registry import SkillRegistry
from core.skills.tool import SKILL_TOOL, render_skill, skill_call_arguments
from core.store.reader import Reader
from core.store.writer import HEAD, Writer

SkillReason = Literal["caller", "model", "reinject"]

DEFAULT_RECENCY_THRESHOLD = 10


@dataclass(frozen=True, slots=True)
class SkillNeed:
    """A skill that must be injected before the next model call, and why."""

    skill: str
    reason: SkillReason
    """``caller`` (first injection of this skill) or ``reinject``."""
    why: str
    """Human-readable cause: not injected yet, compacted away, placeholder, too old."""
    last: SkillInjection | None = None


def skill_position(
    skill: str, items: Sequence[ContextItem], records: Iterable[SkillInjection]
) -> int | None:
    """Index in ``items`` of the newest visible result message of ``skill``, if any.

    An item whose content is overridden (a micro-compaction placeholder, a cleared marker)
    does not show the skill text, so it does not count as present.
    """
    sequences = {r.message_sequence for r in records if r.skill == skill}
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item.sequence in sequences and item.content is None:
            return index
    return None


SkillPresence = Literal["present", "placeholder", "compacted away"]


def skill_presence(
    items: Sequence[ContextItem], records: Sequence[SkillInjection]
) -> list[tuple[SkillInjection, SkillPresence]]:
    """Each record with the state of its message in ``items`` (the UI skills panel, UI-5)."""
    shown = {i.sequence: i.content is None for i in items if i.sequence is not None}
    out: list[tuple[SkillInjection, SkillPresence]] = []
    for r in records:
        visible = shown.get(r.message_sequence)
        state: SkillPresence = (
            "compacted away" if visible is None else "present" if visible else "placeholder"
        )
        out.append((r, state))
    return out


def skills_to_inject(
    wanted: Sequence[str],
    items: Sequence[ContextItem],
    records: Sequence[SkillInjection],
    recency_threshold: int = DEFAULT_RECENCY_THRESHOLD,
) -> list[SkillNeed]:
    """Which of ``wanted`` need injection into the context ``items`` (in ``wanted`` order).

    A skill is fresh when its newest visible result is among the last
    ``recency_threshold`` items. Records of every reason count (a skill the model loaded
    itself satisfies the caller too).
    """
    out: list[SkillNeed] = []
    for skill in dict.fromkeys(wanted):
        mine = [r for r in records if r.skill == skill]
        last = mine[-1] if mine else None
        if last is None:
            out.append(SkillNeed(skill, "caller", "not injected yet"))
            continue
        pos = skill_position(skill, items, mine)
        if pos is None:
            out.append(SkillNeed(skill, "reinject", _missing_why(mine, items), last))
            continue
        age = len(items) - pos
        if age > recency_threshold:
            why = f"older than the recency window ({age} messages back > {recency_threshold})"
            out.append(SkillNeed(skill, "reinject", why, last))
    return out


def _missing_why(records: Sequence[SkillInjection], items: Sequence[ContextItem]) -> str:
    seqs = {r.message_sequence for r in records}
    if any(i.sequence in seqs for i in items):
        return "its message is in the context only as a placeholder"
    return "its message left the context (compacted away)"


def pending_skill_injections(
    reader: Reader,
    trace_id: str,
    wanted: Sequence[str],
    recency_threshold: int = DEFAULT_RECENCY_THRESHOLD,
    head: int | None = None,
    items: Sequence[ContextItem] | None = None,
) -> list[SkillNeed]:
    """``skills_to_inject`` against the trace's current context (or the given ``items``)."""
    if items is None:
        items, _ = current_items(reader, trace_id, head)
    return skills_to_inject(wanted, items, reader.skill_injections(trace_id), recency_threshold)


def skill_call_id(skill: str, sequence: int) -> str:
    """Id of a synthetic ``skill`` call stored at ``sequence``: unique, stable on replay."""
    return f"inj_skill_{skill}_{sequence}"


def inject_skill(
    w: Writer,
    trace_id: str,
    registry: SkillRegistry,
    skill: str,
    reason: SkillReason = "caller",
    *,
    parent: Any = HEAD,
    agent_name: str = "main",
    goal_id: str | None = None,
    branch_type: str | None = None,
    branch_id: str | None = None,
) -> tuple[SkillInjection, list[Message]]:
    """Append the synthetic ``skill(name)`` call and its result (both of kind
    ``injected_skill``) for ``skill`` and record it. Unknown skills raise."""
    call_id = skill_call_id(skill, w.next_sequence(trace_id))
    pair = call_and_result(
        ToolCall(call_id, SKILL_TOOL, skill_call_arguments(skill)),
        render_skill(registry.get(skill)),
        kind="injected_skill",
        agent_name=agent_name,
        goal_id=goal_id,
        branch_type=branch_type,
        branch_id=branch_id,
        metadata={"skill": skill, "reason": reason},
    )
    call, result = w.append(trace_id, list(pair), parent=parent)
    record = SkillInjection(trace_id, skill, result.sequence, call.sequence, reason)
    w.add_skill_injection(record)
    return record, [call, result]


def record_model_skill_load(
    w: Writer, trace_id: str, skill: str, call_sequence: int, result_sequence: int
) -> SkillInjection:
    """Record a skill the model loaded itself through the ``skill`` tool (reason ``model``)."""
    record = SkillInjection(trace_id, skill, result_sequence, call_sequence, "model")
    w.add_skill_injection(record)
    return record


def apply_skill_needs(
    w: Writer,
    trace_id: str,
    registry: SkillRegistry,
    needs: Sequence[SkillNeed],
    *,
    parent: Any = HEAD,
    **kwargs: Any,
) -> list[SkillInjection]:
    """Inject every needed skill in order, each pair chained after the previous one."""
    out: list[SkillInjection] = []
    for need in needs:
        record, msgs = inject_skill(
            w, trace_id, registry, need.skill, need.reason, parent=parent, **kwargs
        )
        out.append(record)
        if parent is not HEAD:
            parent = msgs[-1].sequence
    return out
