"""The delegation view of a trace and its descendants, as JSON (``ctxlens delegation``,
the inspector's Delegation pane). Only recorded values: an absent validation is ``null``."""

from __future__ import annotations

from typing import Any

from core.delegation.brief import brief_diff
from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.normal import DelegationError
from core.delegation.snapshots import RefGrant
from core.delegation.store import (
    Node,
    brief_versions,
    children,
    grants_held,
    load_anchor,
    node,
    validations,
)
from core.store.reader import Reader


def delegation_report(
    r: Reader, trace_id: str, limits: DelegationLimits = DEFAULT_LIMITS
) -> dict[str, Any]:
    """``{anchor, trace_id, brief, refs, validator, children}`` for ``trace_id`` and below."""
    here = node(r, trace_id)
    if here is None:
        raise DelegationError(f"trace {trace_id} is not part of a delegation tree")
    anchor = load_anchor(r, here.root_trace_id)
    anchor_json = {"sha256": anchor.sha256, "chars": anchor.chars, "limit": limits.anchor_chars}
    return _node_json(r, here, anchor_json, limits)


def _node_json(
    r: Reader, here: Node, anchor: dict[str, Any], limits: DelegationLimits
) -> dict[str, Any]:
    refs = [ref_json(g) for g in grants_held(r, here.trace_id)]
    held = [x for x in refs if x["dropped"] is None]
    return {
        "anchor": anchor,
        "trace_id": here.trace_id,
        "name": here.name,
        "depth": here.depth,
        "parent_trace_id": here.parent_trace_id,
        "call_sequence": here.call_sequence,
        "tools": list(here.tools),
        "brief": _brief_json(r, here.trace_id, limits),
        "refs": refs,
        "ref_use": {
            "refs": len(held),
            "refs_limit": limits.refs_per_trace,
            "chars": sum(x["chars"] for x in held),
            "chars_limit": limits.ref_chars_total,
            "snapshot_limit": limits.snapshot_chars,
        },
        "validator": _validator_json(r, here.trace_id),
        "children": [_node_json(r, c, anchor, limits) for c in children(r, here.trace_id)],
    }


def _brief_json(r: Reader, trace_id: str, limits: DelegationLimits) -> dict[str, Any]:
    versions = brief_versions(r, trace_id)
    if not versions:
        return {"version": None, "chars": None, "index": None, "versions": []}
    cur = versions[-1]
    changes = brief_diff(versions[-2].brief, cur.brief) if len(versions) > 1 else ()
    return {
        "version": cur.version,
        "chars": cur.brief.chars,
        "limit": limits.brief_chars,
        "index": cur.index,
        "approved_version": cur.approved_version,
        "versions": [
            {
                "index": v.index,
                "version": v.version,
                "chars": v.brief.chars,
                "parent_sequence": v.parent_sequence,
            }
            for v in versions
        ],
        "changes": [
            {"field": c.field, "removed": list(c.removed), "added": list(c.added)} for c in changes
        ],
        "content": cur.brief.to_json(),
    }


def ref_json(g: RefGrant) -> dict[str, Any]:
    """A grant as the ``refs`` of ``ctxlens delegation --json`` show it."""
    return {
        "ref_id": g.ref_id,
        "version": g.version,
        "kind": g.kind,
        "chars": g.chars,
        "granted_by": g.granted_by,
        "granted_at_sequence": g.granted_at_sequence,
        "read": g.read,
        "dropped": g.dropped,
    }


def _validator_json(r: Reader, trace_id: str) -> dict[str, Any]:
    found = validations(r, trace_id)
    if not found:
        return {"chars": None, "verdict": None}
    last = found[-1]
    packet = last.get("packet") or {}
    return {
        "chars": last.get("packet_chars"),
        "verdict": last.get("verdict"),
        "limit": last.get("limit"),
        "fixed_chars": packet.get("fixed_chars"),
        "parts": packet.get("parts", []),
        "left_out": packet.get("left_out", []),
        "warning": last.get("warning"),
        "model_call": last.get("call"),
        "runs": len(found),
    }
