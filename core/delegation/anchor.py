"""The RootTaskAnchor (DEL-1): objective, completion criteria and constraints of a
recursive root, normalized once and stored as the one authoritative copy with its SHA-256.

Every descendant reads that stored copy by the root's id (``store.py:load_anchor``), so no
intermediate agent can re-summarize or override it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.canonical import CanonicalForm
from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.normal import (
    DelegationError,
    check_json,
    check_size,
    text_field,
    text_list,
)

ANCHOR_TITLE = "[Root task anchor]"


@dataclass(frozen=True, slots=True)
class RootTaskAnchor(CanonicalForm):
    objective: str
    completion_criteria: tuple[str, ...]
    constraints: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "objective": self.objective,
            "completion_criteria": list(self.completion_criteria),
            "constraints": list(self.constraints),
        }

    @property
    def sha256(self) -> str:
        return self.digest


def normalize_anchor(
    raw: Mapping[str, Any] | None, limits: DelegationLimits = DEFAULT_LIMITS
) -> RootTaskAnchor:
    """The anchor of ``raw``; a missing anchor or field is refused (no silent upgrade)."""
    if raw is None:
        raise DelegationError(
            "a recursive root trace needs a RootTaskAnchor (objective, completion_criteria, "
            "constraints); none was given"
        )
    if not isinstance(raw, Mapping):
        raise DelegationError("anchor: expected an object")
    check_json(raw, "anchor")
    anchor = RootTaskAnchor(
        text_field(raw, "objective", "anchor"),
        text_list(raw, "completion_criteria", "anchor", required=True),
        text_list(raw, "constraints", "anchor"),
    )
    check_size(anchor.text, limits.anchor_chars, "anchor")
    return anchor


def anchor_from_json(value: Mapping[str, Any]) -> RootTaskAnchor:
    """A stored anchor back (already normalized)."""
    return RootTaskAnchor(
        str(value["objective"]),
        tuple(value["completion_criteria"]),
        tuple(value.get("constraints") or ()),
    )


def anchor_block(anchor: RootTaskAnchor) -> str:
    """How the anchor reads in a context: once per initial task context and per
    ``get_current_context`` result."""
    lines = [f"{ANCHOR_TITLE} sha256 {anchor.sha256[:16]}", f"Objective: {anchor.objective}"]
    lines += ["Completion criteria:", *(f"- {c}" for c in anchor.completion_criteria)]
    if anchor.constraints:
        lines += ["Constraints:", *(f"- {c}" for c in anchor.constraints)]
    return "\n".join(lines)
