"""The ``agent()`` and ``read_context_ref`` tools of a delegating run.

``agent(name, brief)`` delegates to a child trace (or revises the child of that name): the
brief is normalized with the inherited constraints and must equal the approved one; its
``context_refs`` become grants from this trace's local catalogue only. The child runs on its
own trace with a frozen copy of the tools, never this trace's messages (``agent()`` accepts
no ``messages``). When it finishes, the runtime (not the child) assembles the validator
packet and asks the model for a verdict; the reviewed result enters this trace's catalogue.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, replace
from typing import Any

from core.delegation.anchor import RootTaskAnchor, anchor_block
from core.delegation.brief import TaskBrief, inherited_constraints, match_approved, normalize_brief
from core.delegation.config import METADATA_KEY
from core.delegation.normal import DelegationError
from core.delegation.review import validate_child
from core.delegation.snapshots import (
    RefGrant,
    brief_snapshot,
    catalogue,
    dropped_by_revision,
    plan_grants,
    result_snapshot,
)
from core.delegation.store import (
    BriefVersion,
    Node,
    add_brief_version,
    add_grants,
    add_snapshot,
    children,
    current_brief,
    drop_grants,
    grants_held,
    load_anchor,
    node,
    record_read,
    record_validation,
    register_child,
    snapshot_owner_text,
    snapshots,
)
from core.errors import CtxlensError
from core.lineage import child_title
from core.run.tools import Tool, ToolContext, ToolRegistry, ToolResult

AGENT = "agent"
READ_CONTEXT_REF = "read_context_ref"
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


def delegation_tools() -> list[Tool]:
    return [
        Tool(
            AGENT,
            "Delegate a task to a child agent (same name again: revise it). The child sees "
            "only the brief, the root anchor and the refs you grant, never your messages.",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "child name, e.g. scout"},
                    "brief": {
                        "type": "object",
                        "description": "objective, reason, completion_criteria, "
                        "expected_outputs, findings, context, constraints, "
                        "context_refs: [{ref_id, version}] from your own catalogue",
                    },
                },
                "required": ["name", "brief"],
            },
            _agent,
            read_only=False,
        ),
        Tool(
            READ_CONTEXT_REF,
            "Read a context ref granted to you (exact ref_id and version).",
            {
                "type": "object",
                "properties": {"ref_id": {"type": "string"}, "version": {"type": "string"}},
                "required": ["ref_id", "version"],
            },
            _read_context_ref,
        ),
    ]


async def _agent(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    try:
        return await delegate(ctx.runtime, args)
    except CtxlensError as exc:
        return ToolResult(f"Error: {exc}", is_error=True)


@dataclass(frozen=True)
class _Call:
    """A checked ``agent()`` call: what the write phase records and the child runs on."""

    here: Node
    anchor: RootTaskAnchor
    brief: TaskBrief
    approved: str
    path: str
    child_id: str
    existing: bool
    grants: tuple[RefGrant, ...]
    call_sequence: int
    title: str
    """A new child's trace title (``core/lineage.py:child_title``)."""


async def delegate(parent: Any, args: dict[str, Any]) -> ToolResult:
    """One ``agent()`` call of the DelegatingRunner ``parent`` (see the module docstring).
    Everything is checked before anything is written: a refused call leaves no trace."""
    name, raw = _arguments(args)
    call = _check(parent, name, raw)
    version = _record(parent, call)
    child = _child_runner(parent, call.child_id, name)
    parent.emit(
        "subagent",
        {
            "agent": call.path,
            "trace": call.child_id,
            "status": "start",
            "brief_version": version.version,
        },
    )
    await child.start_turn(f"Work on the task brief v{version.index} above.")
    result = await child.run()
    report = child.final or f"(agent {call.path} stopped: {result.stopped})"
    verdict, packet, model_call = await validate_child(
        parent, call.child_id, anchor_block(call.anchor), call.brief, report
    )
    return _reviewed(
        parent, call.here, call.child_id, call.path, report, verdict, packet, model_call
    )


def _arguments(args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if "messages" in args:
        raise DelegationError("agent(): a recursive local agent() accepts no messages")
    unknown = sorted(set(args) - {"name", "brief"})
    if unknown:
        raise DelegationError(f"agent(): unknown argument(s) {', '.join(unknown)}")
    name, raw = args.get("name"), args.get("brief")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise DelegationError("agent(): name must be 1-40 letters, digits, '-' or '_'")
    if not isinstance(raw, dict):
        raise DelegationError("agent(): brief must be an object")
    return name, raw


def _check(parent: Any, name: str, raw: dict[str, Any]) -> _Call:
    """Normalize and approve the brief, find or name the child, plan its grants."""
    limits = parent.delegation.limits
    approver = parent.delegation.approver
    with parent.store.read() as r:
        here = _node_of(r, parent.trace_id)
        if here.depth + 1 > limits.max_depth:
            raise DelegationError(f"agent(): depth {here.depth + 1} > max_depth {limits.max_depth}")
        anchor = load_anchor(r, here.root_trace_id)
        mine = current_brief(r, here.trace_id)
        inherited = inherited_constraints(anchor, mine.brief if mine else None)
        approved = approver(raw) if approver else raw
        brief = match_approved(approved, raw, inherited, limits)
        local = catalogue(snapshots(r, here.trace_id), grants_held(r, here.trace_id))
        path = f"{here.name}/{name}"
        existing = next((c for c in children(r, here.trace_id) if c.name == path), None)
        title = child_title(path, brief.objective, r.trace(here.root_trace_id).metadata)
    child_id = existing.trace_id if existing else uuid.uuid4().hex[:16]
    seq = parent.call_message.sequence
    grants = plan_grants(
        local,
        brief.context_refs,
        granter=here.trace_id,
        holder=child_id,
        at_sequence=seq,
        limits=limits,
    )
    approved_v = normalize_brief(approved, inherited, limits).version
    return _Call(
        here, anchor, brief, approved_v, path, child_id, existing is not None, grants, seq, title
    )


def _record(parent: Any, call: _Call) -> BriefVersion:
    """The child (new, or revised: its old grants end), its brief version and grants."""
    with parent.store.write() as w:
        if not call.existing:
            w.create_trace(
                call.title,
                "ctxlens-delegation",
                {METADATA_KEY: {"root": call.here.root_trace_id, "parent": call.here.trace_id}},
                call.child_id,
            )
            register_child(
                w, call.child_id, call.here, call.path, call.call_sequence, _tool_names(parent)
            )
        else:
            drop_grants(w, dropped_by_revision(grants_held(w.read, call.child_id), call.child_id))
        version = add_brief_version(w, call.child_id, call.brief, call.approved, call.call_sequence)
        add_snapshot(w, brief_snapshot(call.child_id, call.path, call.brief))
        add_grants(w, call.grants)
    return version


def _node_of(r: Any, trace_id: str) -> Node:
    here = node(r, trace_id)
    if here is None:
        raise DelegationError(
            f"agent(): trace {trace_id} has no RootTaskAnchor; a recursive root must be "
            "started with one (no silent upgrade)"
        )
    return here


def _child_runner(parent: Any, child_id: str, name: str) -> Any:
    settings = parent.delegation
    config = replace(
        parent.config,
        system_prompt=settings.child_prompt.format(name=name),
        max_steps=settings.child_max_steps,
        inject_skills=(),
    )
    frozen = ToolRegistry(
        {n: t for n, t in parent.tools.tools.items() if n not in (AGENT, READ_CONTEXT_REF)}
    )
    return type(parent)(
        parent.store,
        child_id,
        parent.model,
        config,
        tools=frozen,
        delegation=settings,
        **parent.shared_parts(),
    )


def _tool_names(runner: Any) -> list[str]:
    return [s["function"]["name"] for s in runner.tool_schemas()]


def _reviewed(
    parent: Any,
    here: Node,
    child_id: str,
    path: str,
    report: str,
    verdict: str,
    packet: Any,
    model_call: dict[str, Any],
) -> ToolResult:
    validation = {"verdict": verdict, "packet_chars": packet.chars, "limit": packet.limit}
    review = {"reviewed_by": "runtime", "accepted": verdict == "pass"}
    made_at = parent.call_message.sequence  # off the main path after a rewind: out
    snap, warning = result_snapshot(
        here.trace_id, path, report, validation, review, parent.delegation.limits, made_at
    )
    with parent.store.write() as w:
        payload = {**validation, "packet": packet.to_json(), "warning": warning}
        record_validation(w, child_id, {**payload, "call": model_call})
        if snap is not None:
            add_snapshot(w, snap)
    parent.emit(
        "subagent", {"agent": path, "trace": child_id, "status": "done", "verdict": verdict}
    )
    ref = f"ref {snap.ref_id} version {snap.version}" if snap else f"no ref: {warning}"
    head = f"[agent {path} on trace {child_id}: verdict {verdict}; {ref}]"
    return ToolResult(
        f"{head}\n{report}",
        metadata={
            "delegation": {
                "child": child_id,
                "verdict": verdict,
                "ref": snap.ref_id if snap else None,
                "version": snap.version if snap else None,
                "warning": warning,
            }
        },
    )


async def _read_context_ref(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """A granted ref's local copy; anything not held by this trace is refused."""
    ref_id, version = str(args.get("ref_id", "")), str(args.get("version", ""))
    runner = ctx.runtime
    with runner.store.read() as r:
        held = [
            g
            for g in grants_held(r, ctx.trace_id)
            if g.dropped is None and g.ref_id == ref_id and g.version == version
        ]
        text = snapshot_owner_text(r, ref_id, version) if held else None
    if not held or text is None:
        return ToolResult(
            f"Error: {ref_id}@{version[:12]} is not granted to this trace; a trace reads only "
            "the refs its parent granted it (never other traces)",
            is_error=True,
        )
    with runner.store.write() as w:
        record_read(w, held[0], runner.call_message.sequence if runner.call_message else None)
    pretty = json.dumps(json.loads(text), ensure_ascii=False, indent=1)
    return ToolResult(f"[context ref {ref_id} version {version[:16]}]\n{pretty}")
