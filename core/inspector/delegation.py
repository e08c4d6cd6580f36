"""The delegation tree of the trace on view, for the inspector's Delegation pane.

``delegation_tree`` flattens ``core/delegation/report.py:delegation_report`` of the tree's
root into rows (depth-first, parents first); ``node_detail`` writes what the pane shows for
one trace: anchor, brief versions and the diff between the last two, the refs it holds
(granted by whom, at which sequence, read or not, dropped why) against the limits, and the
validator packet's budget and what was left out. Only recorded values; missing is "—".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.delegation.report import delegation_report
from core.delegation.store import node
from core.store.reader import Reader


@dataclass(frozen=True, slots=True)
class DelegationRow:
    data: dict[str, Any]
    parent: int | None
    """Position of the parent row, ``None`` for the root."""

    @property
    def trace_id(self) -> str:
        return str(self.data["trace_id"])


def delegation_tree(r: Reader, trace_id: str) -> list[DelegationRow] | None:
    """Every trace of the tree ``trace_id`` belongs to, or ``None`` when it belongs to none."""
    here = node(r, trace_id)
    if here is None:
        return None
    rows: list[DelegationRow] = []

    def walk(n: dict[str, Any], parent: int | None) -> None:
        rows.append(DelegationRow(n, parent))
        pos = len(rows) - 1
        for child in n["children"]:
            walk(child, pos)

    walk(delegation_report(r, here.root_trace_id), None)
    return rows


def short(version: str | None, n: int = 12) -> str:
    return version[:n] if version else "—"


def brief_cell(n: dict[str, Any]) -> str:
    b = n["brief"]
    if b["version"] is None:
        return "—"
    return f"v{b['index']} · {b['chars']:,}/{b['limit']:,}"


def refs_cell(n: dict[str, Any]) -> str:
    u = n["ref_use"]
    return f"{u['refs']}/{u['refs_limit']} · {u['chars']:,}/{u['chars_limit']:,}"


def verdict_cell(n: dict[str, Any]) -> str:
    v = n["validator"]
    if v["verdict"] is None:
        return "—"
    return f"{v['verdict']} · {v['chars']:,}/{v['limit']:,}"


def node_detail(n: dict[str, Any], names: dict[str, str]) -> str:
    """Plain text, one section per part of the protocol."""
    a, b = n["anchor"], n["brief"]
    out = [
        f"{n['name']}  (trace {n['trace_id']}, depth {n['depth']})",
        f"Anchor {a['chars']:,}/{a['limit']:,} chars, sha256 {a['sha256']}",
        "",
        _brief_section(b),
        "",
        _refs_section(n, names),
        "",
        _validator_section(n["validator"]),
    ]
    return "\n".join(out).rstrip()


def _brief_section(b: dict[str, Any]) -> str:
    if b["version"] is None:
        return "Brief: none recorded"
    lines = [
        f"Brief v{b['index']} {b['chars']:,}/{b['limit']:,} chars, "
        f"version {short(b['version'], 16)}"
    ]
    for v in b["versions"][:-1]:
        lines.append(
            f"  earlier v{v['index']} {v['chars']:,} chars, version {short(v['version'], 16)}"
        )
    if b["changes"]:
        lines.append(f"  changes v{b['index'] - 1} → v{b['index']}:")
        for c in b["changes"]:
            lines += [f"    − {c['field']}: {x}" for x in c["removed"]]
            lines += [f"    + {c['field']}: {x}" for x in c["added"]]
    return "\n".join(lines)


def _refs_section(n: dict[str, Any], names: dict[str, str]) -> str:
    u = n["ref_use"]
    lines = [
        f"Refs held {u['refs']}/{u['refs_limit']}, {u['chars']:,}/{u['chars_limit']:,} chars "
        f"(≤ {u['snapshot_limit']:,} each)"
    ]
    if not n["refs"]:
        lines.append("  none granted")
    for g in n["refs"]:
        by = names.get(g["granted_by"], g["granted_by"])
        state = (
            f"dropped: {g['dropped']}" if g["dropped"] else ("read" if g["read"] else "not read")
        )
        lines.append(
            f"  {g['ref_id']} @{short(g['version'])} {g['kind']} {g['chars']:,} chars, "
            f"granted by {by} at #{g['granted_at_sequence']}, {state}"
        )
    return "\n".join(lines)


def _validator_section(v: dict[str, Any]) -> str:
    if v["verdict"] is None:
        return "Validator: not run for this trace"
    lines = [
        f"Validator verdict {v['verdict']}: packet {v['chars']:,}/{v['limit']:,} chars "
        f"(fixed {v['fixed_chars']:,}; runs {v['runs']})"
    ]
    if v.get("warning"):
        lines.append(f"  warning: {v['warning']}")
    call = v.get("model_call") or {}
    said = call.get("reply") or call.get("skipped") or call.get("error")
    if said:
        lines.append(f"  validator said: {str(said).splitlines()[0][:160]}")
    lines += [f"  {_part_line(p)}" for p in v["parts"]]
    lines += [f"  left out: {x['label']} {x['chars']:,} ({x['reason']})" for x in v["left_out"]]
    return "\n".join(lines)


def _part_line(p: dict[str, Any]) -> str:
    """A fixed part (the root candidate names its root message), or a history part."""
    if not p.get("fixed"):
        return f"in: {p['label']} {p['chars']:,}"
    where = f" (root #{p['sequence']})" if p["sequence"] is not None else ""
    return f"fixed: {p['label']}{where} {p['chars']:,}"
