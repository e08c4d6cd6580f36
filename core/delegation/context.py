"""What a delegated trace sees of the protocol: its initial task context and its section of
``get_current_context``. Both carry the anchor exactly once; neither ever carries snapshot
contents (only ref metadata and static character use; token use stays the model-reported
prompt tokens)."""

from __future__ import annotations

from collections.abc import Sequence

from core.delegation.anchor import RootTaskAnchor, anchor_block
from core.delegation.brief import TaskBrief
from core.delegation.config import DelegationLimits
from core.delegation.snapshots import RefGrant, RefSnapshot, active
from core.delegation.store import Node

SECTION = "Delegation"


def brief_block(brief: TaskBrief, version_index: int) -> str:
    lines = [
        f"[Task brief v{version_index}] version {brief.version[:16]}",
        f"Objective: {brief.objective}",
    ]
    if brief.reason:
        lines.append(f"Reason: {brief.reason}")
    for title, items in (
        ("Completion criteria", brief.completion_criteria),
        ("Expected outputs", brief.expected_outputs),
        ("Parent findings", brief.findings),
        ("Constraints (inherited first; keep all)", brief.constraints),
    ):
        if items:
            lines += [f"{title}:", *(f"- {x}" for x in items)]
    if brief.context:
        lines.append(f"Context: {brief.context}")
    return "\n".join(lines)


def refs_block(grants: Sequence[RefGrant], limits: DelegationLimits) -> str:
    held = active(grants)
    total = sum(g.chars for g in held)
    head = (
        f"[Context refs] {len(held)}/{limits.refs_per_trace} refs, "
        f"{total:,}/{limits.ref_chars_total:,} characters"
    )
    rows = [
        f"- {g.ref_id} version {g.version} ({g.kind}, {g.chars:,} chars, granted by "
        f"{g.granted_by} at #{g.granted_at_sequence}{', read' if g.read else ''})"
        for g in held
    ]
    hint = "Read one with read_context_ref(ref_id, version)." if held else ""
    return "\n".join([head, *rows, hint]).strip()


def catalogue_block(own: Sequence[RefSnapshot]) -> str:
    """What this trace made and may grant (metadata only; latest version last)."""
    rows = [f"- {s.ref_id} version {s.version} ({s.kind}, {s.chars:,} chars)" for s in own]
    return "\n".join(["[Local catalogue] grant with context_refs: [{ref_id, version}]", *rows])


def lineage_line(node: Node) -> str:
    parent = node.parent_trace_id or "none (root)"
    return (
        f"[Lineage] {node.name} (depth {node.depth}, trace {node.trace_id}, parent "
        f"{parent}, budget root {node.budget_root}); tools: {', '.join(node.tools)}"
    )


def task_context(
    anchor: RootTaskAnchor,
    node: Node,
    brief: TaskBrief | None,
    version_index: int,
    grants: Sequence[RefGrant],
    limits: DelegationLimits,
    own: Sequence[RefSnapshot] = (),
    task: str = "",
    with_anchor: bool = True,
) -> str:
    """The task message of a turn: anchor (the first turn only: it is in the initial task
    context exactly once), lineage, brief, ref metadata, catalogue, task."""
    parts = [anchor_block(anchor)] if with_anchor else []
    parts.append(lineage_line(node))
    if brief is not None and node.depth > 0:
        parts.append(brief_block(brief, version_index))
    parts.append(refs_block(grants, limits))
    if own:
        parts.append(catalogue_block(own))
    if task:
        parts.append(task)
    return "\n\n".join(parts)


def current_section(
    anchor: RootTaskAnchor,
    brief: TaskBrief | None,
    version_index: int,
    grants: Sequence[RefGrant],
    limits: DelegationLimits,
    own: Sequence[RefSnapshot] = (),
) -> str:
    """The ``get_current_context`` section: anchor, brief version and static use."""
    chars = f"anchor {anchor.chars:,}/{limits.anchor_chars:,} chars"
    if brief is not None:
        chars += (
            f"; brief v{version_index} {brief.version[:16]} "
            f"{brief.chars:,}/{limits.brief_chars:,} chars"
        )
    parts = [anchor_block(anchor), chars, refs_block(grants, limits)]
    return "\n".join([*parts, catalogue_block(own)] if own else parts)
