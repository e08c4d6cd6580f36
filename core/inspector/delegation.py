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
from core.inspector.unrecorded import unrecorded_panels
from core.inspector.wording import counted
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


def no_tree_note(r: Reader, trace_id: str) -> str:
    """What the Delegation pane says of a trace outside any delegation tree: a ctxlens run
    that delegated nothing, or a trace from a tool that records no delegation tree (one
    whose source records no goals, skills or grants either:
    ``core/inspector/unrecorded.py:unrecorded_panels``). Its subagents, side branches in
    the timeline, are counted and named: a Claude Code session's Task subagent is not "no
    delegation"."""
    names = subagent_names(r, trace_id)
    native = not unrecorded_panels(r, trace_id)  # a ctxlens run's records, or its like
    if native:
        text = "This trace is not part of a delegation tree (ctxlens demo --scenario delegation)."
    else:
        text = (
            "Delegation trees (briefs, refs, validator verdicts) are recorded by ctxlens's "
            f"own runs; {r.trace(trace_id).source} does not record them."
        )
    if not names:
        return text if native else f"{text} This trace has no subagent branch."
    one = len(names) == 1
    its = "Its subagent is a side branch" if one else "Its subagents are side branches"
    return (
        f"{text} {its} in the timeline: {_subagents(names)}. {BRANCHES_HINT} lists "
        f"{'it' if one else 'them'}."
    )


BRANCHES_HINT = "Navigate → Show branches (Ctrl+B)"
"""Where the side branches are listed (``ui/window_actions.py``'s ``nav.branches``)."""


def subagent_names(r: Reader, trace_id: str) -> list[str]:
    """One name per subagent side branch (its agent's name; the branch id when it has
    none), in the order they start."""
    lines = sorted(
        (li for li in r.lines(trace_id).values() if li.branch_type == "subagent"),
        key=lambda li: li.start_sequence,
    )
    seen: dict[str, str] = {}
    starts = r.messages(trace_id, [li.start_sequence for li in lines])
    for li in lines:
        key = li.branch_id or str(li.line)
        if key not in seen:
            m = starts.get(li.start_sequence)
            name = m.agent_name if m is not None and m.agent_name != "main" else ""
            seen[key] = name or li.branch_id or f"line {li.line}"
    return list(seen.values())


def _subagents(names: list[str]) -> str:
    """``1 subagent, claude-code-guide``; ``3 subagents: a, b, c``."""
    sep = ", " if len(names) == 1 else ": "
    return f"{counted(len(names), 'subagent')}{sep}{', '.join(names)}"


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
