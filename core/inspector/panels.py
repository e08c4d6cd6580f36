"""Rows of the skills and grants panels (UI-5), from the store's records.

A skill injection is ``present`` while its result is in the current context as written,
``placeholder`` when only a placeholder stands for it, and ``compacted away`` once it is
gone; a record made by the runtime's re-injection (INJ-3) that is present says
``re-injected``, and an earlier record names the injection that replaced it.
A grant row joins the grant with its ref; a ref never granted still gets a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.context.skill_injection import skill_presence
from core.inspector.membership import ContextMembership, context_membership
from core.inspector.wording import counted
from core.records import ContextItem, ContextRef, SkillInjection
from core.replay.playback import SkillAsOf
from core.store.paths import Segment
from core.store.reader import Reader


@dataclass(frozen=True, slots=True)
class SkillRow:
    skill: str
    message_id: str
    message_sequence: int
    call_sequence: int | None
    reason: str
    status: str
    """present | placeholder | compacted away | re-injected (a re-injection now present)."""
    note: str = ""
    """What happened next: the later injection of the same skill that replaced this one."""
    sequences: tuple[int, ...] = ()
    """Messages of this injection (the call and the result): what a click selects."""


@dataclass(frozen=True, slots=True)
class GrantRow:
    ref_id: str
    kind: str
    description: str
    size: str
    granted_at: int | None
    granted_by: str
    cost: str
    revoked_at: int | None
    revoked_reason: str
    message_sequence: int | None
    source_sequence: int | None
    status: str
    """active | revoked | not granted."""


NOT_GRANTED = "not granted"
"""The status of a ref the trace recorded but never granted (listed after the grants)."""


def skill_rows(
    reader: Reader, trace_id: str, member: ContextMembership | None = None
) -> list[SkillRow]:
    """One row per injection record with its state in the current context
    (``core/context/skill_injection.py:skill_presence``)."""
    segs = reader.segments(trace_id)
    member = member or context_membership(reader, trace_id, segments=segs)
    records = reader.skill_injections(trace_id)
    items = _skill_items(reader, trace_id, records, member, segs)
    out = []
    for n, (rec, state) in enumerate(skill_presence(items, records)):
        status: str = state
        if state == "present" and rec.reason == "reinject":
            status = "re-injected"
        out.append(skill_row(trace_id, records, n, status, gone=state != "present"))
    return out


def skill_row(
    trace_id: str,
    records: Sequence[SkillInjection] | Sequence[SkillAsOf],
    n: int,
    status: str,
    gone: bool,
) -> SkillRow:
    """The row of ``records[n]``; a ``gone`` record names the later injection of the same
    skill that replaced it."""
    rec = records[n]
    later = next((r for r in records[n + 1 :] if r.skill == rec.skill), None)
    note = f"{later.reason} as #{later.message_sequence}" if later is not None and gone else ""
    seqs = tuple(s for s in (rec.call_sequence, rec.message_sequence) if s is not None)
    return SkillRow(
        rec.skill,
        f"{trace_id}:{rec.message_sequence}",
        rec.message_sequence,
        rec.call_sequence,
        rec.reason,
        status,
        note,
        seqs,
    )


def _skill_items(
    reader: Reader,
    trace_id: str,
    records: list[SkillInjection],
    member: ContextMembership,
    segs: list[Segment],
) -> list[ContextItem]:
    """The current context's items for the records' messages only (never the whole list):
    the boundary's own item when it kept the message (maybe as a placeholder), else a plain
    item when the message lies in the context after the boundary."""
    wanted = {r.message_sequence for r in records}
    kept = {
        i.sequence: i
        for i in (member.boundary.context_after if member.boundary is not None else ())
        if i.sequence in wanted
    }
    rows = reader.path_rows(trace_id, sorted(wanted - set(kept)), segs)
    live = [ContextItem(s) for s, row in rows.items() if member.contains(row, s)]
    return [*kept.values(), *live]


def grant_rows(reader: Reader, trace_id: str) -> list[GrantRow]:
    refs = {r.id: r for r in reader.refs(trace_id)}
    out: list[GrantRow] = []
    granted: set[str] = set()
    for g in reader.grants(trace_id):
        ref = refs.get(g.ref_id)
        granted.add(g.ref_id)
        out.append(
            grant_row(
                g.ref_id, ref, g.granted_at_sequence, g.granted_by, g.cost,
                g.revoked_at_sequence, g.revoked_reason, g.message_sequence,
                "revoked" if g.revoked_reason is not None else "active",
            )
        )  # fmt: skip
    for ref in refs.values():
        if ref.id not in granted:
            size = ref_size(ref.tokens, ref.bytes, ref.image_blocks)
            out.append(
                GrantRow(
                    ref.id, ref.kind, ref.description, size, None, "", "", None, "",
                    None, ref.source_sequence, NOT_GRANTED,
                )
            )  # fmt: skip
    return out


def grant_summary(rows: Sequence[GrantRow]) -> str:
    """The line over the grants panel: ``2 grants (1 active, 1 revoked) · 40 refs never
    granted, listed after them in grey``; refs never granted are not grants, and a table
    that mixed them read as if they were."""
    grants = [r for r in rows if r.status != NOT_GRANTED]
    refs = len(rows) - len(grants)
    by: dict[str, int] = {}
    for r in grants:
        by[r.status] = by.get(r.status, 0) + 1
    parts = []
    if grants or not refs:
        states = ", ".join(f"{n:,} {status}" for status, n in by.items())
        parts.append(counted(len(grants), "grant") + (f" ({states})" if states else ""))
    if refs:
        after = ", listed after the grants in grey" if grants else " (shown in grey)"
        parts.append(f"{counted(refs, 'ref')} never granted{after}")
    return " · ".join(parts)


def grant_row(
    ref_id: str,
    ref: ContextRef | None,
    granted_at: int | None,
    granted_by: str,
    cost: Any,
    revoked_at: int | None,
    revoked_reason: str | None,
    message_sequence: int | None,
    status: str,
) -> GrantRow:
    """One row of the grants panel (live, or as of a call during playback)."""
    return GrantRow(
        ref_id,
        ref.kind if ref else "?",
        ref.description if ref else "",
        ref_size(ref.tokens, ref.bytes, ref.image_blocks) if ref else "",
        granted_at,
        granted_by,
        format_cost(cost),
        revoked_at,
        revoked_reason or "",
        message_sequence,
        ref.source_sequence if ref else None,
        status,
    )


def ref_size(tokens: int, nbytes: int, images: int) -> str:
    """A ref's size as the grants panel shows it ("1,204 tok, 4.7 KB")."""
    parts = [f"{tokens:,} tok"]
    if nbytes:
        parts.append(_bytes(nbytes))
    if images:
        parts.append(f"{images} img")
    return ", ".join(parts)


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n = n / 1024  # type: ignore[assignment]
    return f"{n} B"


def format_cost(cost: Any) -> str:
    if isinstance(cost, dict):
        return ", ".join(
            f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in cost.items()
        )
    return "" if cost is None else str(cost)
