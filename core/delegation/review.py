"""The runtime's review of a delegated child (DEL-4): the validator packet assembled from
the store, never by the agent under review, and the validator's one model call.

The fixed parts are the anchor, the brief, the child's report, the validation plan (every
criterion, expected output and constraint of the brief), the artifacts the report names
with their whole content (``artifacts.py``) and the root's current candidate answer
(``candidate.py``); then the child's main path newest first (``validator.py``).
"""

from __future__ import annotations

from typing import Any

from core.delegation.artifacts import named_artifacts, resolve_artifacts
from core.delegation.candidate import root_candidate
from core.delegation.store import grants_held, node
from core.delegation.validator import (
    FixedParts,
    LeftOut,
    PacketPart,
    assemble_packet,
    history_parts,
    parse_verdict,
    unread_refs,
)
from core.errors import CtxlensError


async def validate_child(
    parent: Any, child_id: str, anchor: str, brief: Any, report: str
) -> tuple[str, Any, dict[str, Any]]:
    """The runtime's review of a child: packet from the child's stored main path, one model
    call (recorded: reply, usage, model), ``unknown`` when the packet cannot be sent."""
    fixed, history, excluded = packet_inputs(parent, child_id, anchor, brief, report)
    packet = assemble_packet(fixed, history, excluded, parent.delegation.limits)
    if packet.over_limit:
        return "unknown", packet, {"skipped": "the fixed parts alone exceed the budget"}
    try:
        response = await parent.model.complete(packet.messages(), model=parent.config.model)
    except CtxlensError as exc:
        return "unknown", packet, {"error": str(exc)}
    call = {"reply": response.text[:2000], "usage": response.usage, "model": response.model}
    return parse_verdict(response.text), packet, call


def packet_inputs(
    parent: Any, child_id: str, anchor: str, brief: Any, report: str
) -> tuple[FixedParts, tuple[PacketPart, ...], tuple[LeftOut, ...]]:
    """Everything the packet is made of, read from the store: the child's main path, refs
    and grants, the artifacts its report names, the root's candidate answer."""
    with parent.store.read() as r:
        msgs = list(r.iter_main_path(child_id))
        unread = unread_refs(grants_held(r, child_id))
        child_refs = r.refs(child_id)
        root_id = node(r, child_id).root_trace_id  # type: ignore[union-attr]
        candidate = root_candidate(r.iter_main_path(root_id))
    if msgs and msgs[-1].role == "assistant" and msgs[-1].content == report:
        msgs = msgs[:-1]  # the report is a fixed part
    history, excluded = history_parts(msgs)
    artifacts = resolve_artifacts(named_artifacts(report), msgs, child_refs)
    fixed = FixedParts(
        anchor,
        brief.text,
        report,
        validation_plan(brief),
        tuple((f"{a.name} ({a.source or 'unresolved'})", a.text) for a in artifacts),
        candidate.text,
        candidate.sequence,
    )
    if not candidate.text:
        excluded += (LeftOut("root candidate answer", 0, "the root has no answer text yet"),)
    return fixed, history, excluded + unread


def validation_plan(brief: Any) -> str:
    """The validation plan: every criterion, expected output and constraint of the brief."""
    return "\n".join(
        [
            *(f"- criterion: {c}" for c in brief.completion_criteria),
            *(f"- expected output: {o}" for o in brief.expected_outputs),
            *(f"- constraint: {c}" for c in brief.constraints),
        ]
    )
