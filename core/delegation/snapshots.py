"""ContextRef snapshots and grants across levels (DEL-3).

A snapshot is immutable content under a ref id; its version is the SHA-256 of the
normalized content. Two kinds: ``task_brief`` (a version of a parent's brief) and
``reviewed_task_result`` (a reviewed TaskReport + ValidationResult + TaskReview).

A trace's **local catalogue** is what it produced (its own brief, its children's reviewed
results) plus the grants it holds. A brief may grant only exact ref/version pairs of the
granting trace's catalogue; so a level that does not re-grant a ref cuts off everyone below.
Limits per holder: ``refs_per_trace`` refs, ``snapshot_chars`` each, ``ref_chars_total`` in
all. A grant ends (never deleted) when its holder is revised or its granter rewinds before
``granted_at_sequence``.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.canonical import CanonicalForm
from core.delegation.brief import RefPin, TaskBrief
from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.normal import DelegationError, check_json

SnapshotKind = Literal["task_brief", "reviewed_task_result"]
KINDS: tuple[SnapshotKind, ...] = ("task_brief", "reviewed_task_result")


@dataclass(frozen=True, slots=True)
class RefSnapshot(CanonicalForm):
    """Immutable content of a context ref at one version."""

    ref_id: str
    kind: SnapshotKind
    content: Any
    owner: str
    """The trace whose catalogue it belongs to (where it was made)."""
    made_at: int | None = None
    """The owner's message it was made at (``None``: not tied to one, e.g. a brief)."""

    def to_json(self) -> Any:
        return self.content

    @property
    def version(self) -> str:
        return self.digest

    @property
    def entry(self) -> CatalogueEntry:
        return CatalogueEntry(self.ref_id, self.version, self.kind, self.chars)


@dataclass(frozen=True, slots=True)
class CatalogueEntry:
    """What a trace may re-grant: an exact pair and its size (never its content)."""

    ref_id: str
    version: str
    kind: str
    chars: int

    @property
    def pin(self) -> RefPin:
        return RefPin(self.ref_id, self.version)


@dataclass(frozen=True, slots=True)
class RefGrant:
    """A ref held by ``holder``, granted by ``granted_by`` at its message
    ``granted_at_sequence``."""

    holder: str
    ref_id: str
    version: str
    kind: str
    chars: int
    granted_by: str
    granted_at_sequence: int
    read: bool = False
    dropped: str | None = None
    """Why it ended (``revised``, ``rewind to N``); ``None`` while held."""
    id: int | None = None

    @property
    def entry(self) -> CatalogueEntry:
        return CatalogueEntry(self.ref_id, self.version, self.kind, self.chars)


def brief_snapshot(owner: str, path: str, brief: TaskBrief) -> RefSnapshot:
    """A version of the brief of trace ``owner`` (tree path ``path``) as a snapshot its
    children may be granted. Ref ids name tree paths, so a script can name them."""
    return RefSnapshot(f"brief:{path}", "task_brief", brief.to_json(), owner)


def result_snapshot(
    parent: str,
    child_path: str,
    report: Any,
    validation: Any,
    review: Any,
    limits: DelegationLimits = DEFAULT_LIMITS,
    made_at: int | None = None,
) -> tuple[RefSnapshot | None, str | None]:
    """The reviewed result of the child at ``child_path`` in its parent's catalogue, or
    ``(None, warning)`` when it is over ``snapshot_chars`` (it still passed review; it
    just yields no ref)."""
    content = {"report": report, "validation": validation, "review": review}
    check_json(content, "reviewed_task_result")
    snap = RefSnapshot(f"result:{child_path}", "reviewed_task_result", content, parent, made_at)
    if snap.chars > limits.snapshot_chars:
        warning = (
            f"reviewed result of {child_path} is {snap.chars:,} characters (limit "
            f"{limits.snapshot_chars:,}): reviewed, but no context ref was made"
        )
        return None, warning
    return snap, None


def current(own: Iterable[RefSnapshot], on_path: Container[int] | None) -> tuple[RefSnapshot, ...]:
    """Snapshots still in the catalogue: not made by a message a rewind left behind."""
    return tuple(s for s in own if on_path is None or s.made_at is None or s.made_at in on_path)


def active(grants: Iterable[RefGrant]) -> tuple[RefGrant, ...]:
    return tuple(g for g in grants if g.dropped is None)


def catalogue(own: Iterable[RefSnapshot], held: Iterable[RefGrant]) -> dict[RefPin, CatalogueEntry]:
    """A trace's local catalogue: its own snapshots and the grants it still holds."""
    out = {s.entry.pin: s.entry for s in own}
    for g in active(held):
        out.setdefault(g.entry.pin, g.entry)
    return out


def plan_grants(
    local: dict[RefPin, CatalogueEntry],
    pins: Sequence[RefPin],
    *,
    granter: str,
    holder: str,
    at_sequence: int,
    limits: DelegationLimits = DEFAULT_LIMITS,
) -> tuple[RefGrant, ...]:
    """The grants a brief's ``context_refs`` make, or an error naming the first pin that
    is not in the granter's catalogue or breaks a limit (nothing is granted then)."""
    if len(pins) > limits.refs_per_trace:
        raise DelegationError(
            f"brief.context_refs: {len(pins)} refs, limit {limits.refs_per_trace} per trace"
        )
    out: list[RefGrant] = []
    for n, pin in enumerate(pins):
        entry = local.get(pin)
        if entry is None:
            raise DelegationError(
                f"brief.context_refs[{n}]: {pin.ref_id}@{pin.version[:12]} is not in this "
                "trace's local catalogue (only exact ref/version pairs it holds or made)"
            )
        if entry.chars > limits.snapshot_chars:
            raise DelegationError(
                f"brief.context_refs[{n}]: {pin.ref_id} is {entry.chars:,} characters, "
                f"limit {limits.snapshot_chars:,}"
            )
        out.append(
            RefGrant(holder, pin.ref_id, pin.version, entry.kind, entry.chars, granter, at_sequence)
        )
    total = sum(g.chars for g in out)
    if total > limits.ref_chars_total:
        raise DelegationError(
            f"brief.context_refs: {total:,} characters in all, limit {limits.ref_chars_total:,}"
        )
    return tuple(out)


def dropped_by_rewind(
    grants: Iterable[RefGrant], granter: str, to_sequence: int
) -> tuple[RefGrant, ...]:
    """The held grants ``granter`` made after ``to_sequence`` (a rewind there drops them)."""
    reason = f"rewind to {to_sequence}"
    return tuple(
        replace(g, dropped=reason)
        for g in active(grants)
        if g.granted_by == granter and g.granted_at_sequence > to_sequence
    )


def dropped_by_revision(grants: Iterable[RefGrant], holder: str) -> tuple[RefGrant, ...]:
    """A revised child's old grants, all ended."""
    return tuple(replace(g, dropped="revised") for g in active(grants) if g.holder == holder)
