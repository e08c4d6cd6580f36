"""TaskBrief (DEL-2): what a parent hands a child, normalized and validated.

Normalization checks the required fields, refuses what JSON cannot carry (NaN/Infinity),
de-duplicates list fields stably and puts the inherited constraints (root anchor's, then
the direct parent's) in front of the child's own: a child may add constraints, never remove
one. The normalized form is at most ``brief_chars`` characters; its SHA-256 is the version.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.canonical import CanonicalForm, canonical_json
from core.delegation.anchor import RootTaskAnchor
from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.normal import (
    DelegationError,
    check_json,
    check_size,
    dedupe,
    text_field,
    text_list,
)

VERSION_RE = re.compile(r"^[0-9a-f]{64}$")
LIST_FIELDS = ("completion_criteria", "expected_outputs", "findings", "constraints")
TEXT_FIELDS = ("objective", "reason", "context")


@dataclass(frozen=True, slots=True)
class RefPin:
    """An exact ref/version pair a brief grants."""

    ref_id: str
    version: str

    def to_json(self) -> dict[str, str]:
        return {"ref_id": self.ref_id, "version": self.version}


@dataclass(frozen=True, slots=True)
class TaskBrief(CanonicalForm):
    objective: str
    completion_criteria: tuple[str, ...]
    reason: str = ""
    expected_outputs: tuple[str, ...] = ()
    findings: tuple[str, ...] = ()
    context: str = ""
    constraints: tuple[str, ...] = ()
    context_refs: tuple[RefPin, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "objective": self.objective,
            "reason": self.reason,
            "completion_criteria": list(self.completion_criteria),
            "expected_outputs": list(self.expected_outputs),
            "findings": list(self.findings),
            "context": self.context,
            "constraints": list(self.constraints),
            "context_refs": [p.to_json() for p in self.context_refs],
        }

    @property
    def version(self) -> str:
        return self.digest


def inherited_constraints(
    anchor: RootTaskAnchor, parent: TaskBrief | None = None
) -> tuple[str, ...]:
    """The constraints a child must keep: the root's, then its direct parent's."""
    return dedupe([*anchor.constraints, *(parent.constraints if parent else ())])


def normalize_brief(
    raw: Mapping[str, Any],
    inherited: Sequence[str] = (),
    limits: DelegationLimits = DEFAULT_LIMITS,
) -> TaskBrief:
    """The normalized brief of ``raw`` (idempotent: normalizing the result gives it back)."""
    if not isinstance(raw, Mapping):
        raise DelegationError("brief: expected an object")
    check_json(raw, "brief")
    unknown = sorted(set(raw) - {*LIST_FIELDS, *TEXT_FIELDS, "context_refs"})
    if unknown:
        raise DelegationError(f"brief: unknown field(s) {', '.join(unknown)}")
    brief = TaskBrief(
        objective=text_field(raw, "objective", "brief"),
        completion_criteria=text_list(raw, "completion_criteria", "brief", required=True),
        reason=text_field(raw, "reason", "brief", required=False),
        expected_outputs=text_list(raw, "expected_outputs", "brief"),
        findings=text_list(raw, "findings", "brief"),
        context=text_field(raw, "context", "brief", required=False),
        constraints=dedupe([*inherited, *text_list(raw, "constraints", "brief")]),
        context_refs=_pins(raw.get("context_refs")),
    )
    check_size(brief.text, limits.brief_chars, "brief")
    return brief


def _pins(value: Any) -> tuple[RefPin, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise DelegationError("brief.context_refs: expected a list of {ref_id, version}")
    pins: list[RefPin] = []
    for n, item in enumerate(value):
        where = f"brief.context_refs[{n}]"
        if not isinstance(item, Mapping) or set(item) != {"ref_id", "version"}:
            raise DelegationError(f"{where}: expected exactly {{ref_id, version}}")
        ref_id, version = item["ref_id"], item["version"]
        if not isinstance(ref_id, str) or not ref_id.strip():
            raise DelegationError(f"{where}.ref_id: expected a non-empty string")
        if not isinstance(version, str) or not VERSION_RE.match(version):
            raise DelegationError(f"{where}.version: expected a SHA-256 (64 hex digits)")
        pins.append(RefPin(ref_id.strip(), version))
    return dedupe(pins)


def root_brief(anchor: RootTaskAnchor) -> TaskBrief:
    """The root's own brief: the anchor as a brief (root constraints enter the first
    TaskBrief from here)."""
    return TaskBrief(anchor.objective, anchor.completion_criteria, constraints=anchor.constraints)


def brief_from_json(value: Mapping[str, Any]) -> TaskBrief:
    """A stored (already normalized) brief back."""
    return normalize_brief(value, (), DelegationLimits(brief_chars=10**9))


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of a brief between two versions."""

    field: str
    removed: tuple[str, ...]
    added: tuple[str, ...]


def brief_diff(old: TaskBrief, new: TaskBrief) -> tuple[FieldChange, ...]:
    """What changed from ``old`` to ``new``, field by field (list entries compared as sets,
    order kept)."""
    a, b = old.to_json(), new.to_json()
    out: list[FieldChange] = []
    for name in a:
        before, after = _entries(a[name]), _entries(b[name])
        if before != after:
            gone = tuple(x for x in before if x not in after)
            came = tuple(x for x in after if x not in before)
            out.append(FieldChange(name, gone, came))
    return tuple(out)


def _entries(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(canonical_json(v) if not isinstance(v, str) else v for v in value)
    return (value,) if value else ()


def match_approved(
    approved: Mapping[str, Any],
    called: Mapping[str, Any],
    inherited: Sequence[str] = (),
    limits: DelegationLimits = DEFAULT_LIMITS,
) -> TaskBrief:
    """The brief of an ``agent()`` call, when it equals the approved one after the same
    normalization; otherwise refused, naming the fields that differ."""
    a = normalize_brief(approved, inherited, limits)
    c = normalize_brief(called, inherited, limits)
    if a.text != c.text:
        fields = ", ".join(ch.field for ch in brief_diff(a, c))
        raise DelegationError(f"agent(): the brief differs from the approved one in {fields}")
    return c
