"""The delegation tables (``core/store/schema.py``), append-only in spirit: a revision adds
a brief version, a rewind or revision marks grants dropped, reads are run events; nothing
is rewritten or deleted."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import insert, select, update

from core.delegation.anchor import RootTaskAnchor, anchor_from_json
from core.delegation.brief import TaskBrief, brief_from_json, root_brief
from core.delegation.normal import DelegationError
from core.delegation.snapshots import RefGrant, RefSnapshot, current
from core.store import schema as t
from core.store.reader import Reader
from core.store.writer import Writer

READ_EVENT = "context_ref_read"
VALIDATION_EVENT = "validation"


@dataclass(frozen=True, slots=True)
class Node:
    """One trace's place in a delegation tree (what a child is given besides its brief)."""

    trace_id: str
    root_trace_id: str
    parent_trace_id: str | None
    depth: int
    name: str
    call_sequence: int | None
    anchor_sha256: str
    tools: tuple[str, ...]
    budget_root: str


@dataclass(frozen=True, slots=True)
class BriefVersion:
    index: int
    brief: TaskBrief
    approved_version: str | None
    parent_sequence: int | None

    @property
    def version(self) -> str:
        return self.brief.version


# -- writing ---------------------------------------------------------------------------------
def register_root(w: Writer, trace_id: str, anchor: RootTaskAnchor, tools: Iterable[str]) -> Node:
    """Make ``trace_id`` a recursive root: the one authoritative anchor copy, and the root's
    own brief (the anchor as a brief) as version 1."""
    if node(w.read, trace_id) is not None:
        raise DelegationError(f"trace {trace_id} is already part of a delegation tree")
    values = _node_values(trace_id, trace_id, None, 0, "root", None, anchor.sha256, tools)
    w.conn.execute(insert(t.delegation_traces).values(anchor=anchor.to_json(), **values))
    add_brief_version(w, trace_id, root_brief(anchor), None, None)
    return _node(values)


def register_child(
    w: Writer, trace_id: str, parent: Node, name: str, call_sequence: int, tools: Iterable[str]
) -> Node:
    values = _node_values(
        trace_id,
        parent.root_trace_id,
        parent.trace_id,
        parent.depth + 1,
        name,
        call_sequence,
        parent.anchor_sha256,
        tools,
    )
    w.conn.execute(insert(t.delegation_traces).values(anchor=None, **values))
    return _node(values)


def _node_values(
    trace_id: str,
    root: str,
    parent: str | None,
    depth: int,
    name: str,
    call_sequence: int | None,
    sha: str,
    tools: Iterable[str],
) -> dict[str, Any]:
    return {
        "trace_id": trace_id,
        "root_trace_id": root,
        "parent_trace_id": parent,
        "depth": depth,
        "name": name,
        "call_sequence": call_sequence,
        "anchor_sha256": sha,
        "tools": sorted(tools),
        "budget_root": root,
        "created_at": time.time(),
    }


def add_brief_version(
    w: Writer, trace_id: str, brief: TaskBrief, approved: str | None, parent_sequence: int | None
) -> BriefVersion:
    """A new current version; older versions stay as they were."""
    c = t.task_protocol_versions.c
    index = w.next_index(c.version_index, c.trace_id, trace_id, first=1)
    w.conn.execute(
        insert(t.task_protocol_versions).values(
            trace_id=trace_id,
            version_index=index,
            version=brief.version,
            brief=brief.to_json(),
            chars=brief.chars,
            approved_version=approved,
            parent_sequence=parent_sequence,
            created_at=time.time(),
        )
    )
    return BriefVersion(index, brief, approved, parent_sequence)


def add_snapshot(w: Writer, snap: RefSnapshot) -> None:
    """Store a snapshot once per owner, pair and making message (same pair = same content)."""
    c = t.context_ref_snapshots.c
    made = c.made_at_sequence
    found = w.conn.execute(
        select(c.id).where(
            c.trace_id == snap.owner,
            c.ref_id == snap.ref_id,
            c.version == snap.version,
            made.is_(None) if snap.made_at is None else made == snap.made_at,
        )
    ).first()
    if found is None:
        w.conn.execute(
            insert(t.context_ref_snapshots).values(
                trace_id=snap.owner,
                ref_id=snap.ref_id,
                version=snap.version,
                kind=snap.kind,
                content=snap.text,
                chars=snap.chars,
                made_at_sequence=snap.made_at,
                created_at=time.time(),
            )
        )


def add_grants(w: Writer, grants: Iterable[RefGrant]) -> list[RefGrant]:
    out = []
    for g in grants:
        key = w.insert_record(t.delegation_grants, g, trace_id=g.holder)
        assert key is not None
        out.append(replace(g, id=int(key[0])))
    return out


def drop_grants(w: Writer, grants: Iterable[RefGrant]) -> None:
    """Mark each grant ended with its ``dropped`` reason (once; the row stays)."""
    for g in grants:
        w.conn.execute(
            update(t.delegation_grants)
            .where(t.delegation_grants.c.id == g.id, t.delegation_grants.c.dropped_reason.is_(None))
            .values(dropped_reason=g.dropped)
        )


def record_read(w: Writer, grant: RefGrant, sequence: int | None) -> None:
    """A ``read_context_ref`` of a held grant, keyed by what survives an export (never the
    grant's row id)."""
    payload = {
        "grant": grant.id,
        "ref_id": grant.ref_id,
        "version": grant.version,
        "granted_at_sequence": grant.granted_at_sequence,
    }
    w.add_run_event(grant.holder, READ_EVENT, sequence, payload)


def record_validation(w: Writer, trace_id: str, payload: dict[str, Any]) -> None:
    w.add_run_event(trace_id, VALIDATION_EVENT, None, payload)


# -- reading ---------------------------------------------------------------------------------
def node(r: Reader, trace_id: str) -> Node | None:
    row = r.conn.execute(
        select(t.delegation_traces).where(t.delegation_traces.c.trace_id == trace_id)
    ).first()
    return _node(dict(row._mapping)) if row is not None else None


def _node(m: dict[str, Any]) -> Node:
    return Node(
        m["trace_id"],
        m["root_trace_id"],
        m["parent_trace_id"],
        int(m["depth"]),
        m["name"],
        m["call_sequence"],
        m["anchor_sha256"],
        tuple(m["tools"] or ()),
        m["budget_root"],
    )


def children(r: Reader, trace_id: str) -> list[Node]:
    c = t.delegation_traces.c
    q = select(t.delegation_traces).where(c.parent_trace_id == trace_id).order_by(c.created_at)
    return [_node(dict(row._mapping)) for row in r.conn.execute(q)]


def load_anchor(r: Reader, root_trace_id: str) -> RootTaskAnchor:
    """The authoritative anchor, read from the root's row (checked against its hash)."""
    c = t.delegation_traces.c
    row = r.conn.execute(
        select(c.anchor, c.anchor_sha256).where(c.trace_id == root_trace_id)
    ).first()
    if row is None or row.anchor is None:
        raise DelegationError(f"trace {root_trace_id} is not a recursive root (no anchor)")
    anchor = anchor_from_json(row.anchor)
    if anchor.sha256 != row.anchor_sha256:
        raise DelegationError(f"anchor of {root_trace_id}: stored SHA-256 does not match")
    return anchor


def brief_versions(r: Reader, trace_id: str) -> list[BriefVersion]:
    c = t.task_protocol_versions.c
    q = select(t.task_protocol_versions).where(c.trace_id == trace_id).order_by(c.version_index)
    return [
        BriefVersion(
            int(m.version_index), brief_from_json(m.brief), m.approved_version, m.parent_sequence
        )
        for m in r.conn.execute(q)
    ]


def current_brief(r: Reader, trace_id: str) -> BriefVersion | None:
    versions = brief_versions(r, trace_id)
    return versions[-1] if versions else None


def snapshots(r: Reader, owner: str, on_main_path: bool = True) -> list[RefSnapshot]:
    """The owner's snapshots, by default only those still in its catalogue (made on its
    current main path)."""
    c = t.context_ref_snapshots.c
    q = select(t.context_ref_snapshots).where(c.trace_id == owner).order_by(c.id)
    made = [
        RefSnapshot(m.ref_id, m.kind, json.loads(m.content), m.trace_id, m.made_at_sequence)
        for m in r.conn.execute(q)
    ]
    if not on_main_path or all(s.made_at is None for s in made):
        return made
    return list(current(made, set(r.main_path_sequences(owner))))


def snapshot_text(r: Reader, owner: str, ref_id: str, version: str) -> str | None:
    c = t.context_ref_snapshots.c
    return r.conn.execute(
        select(c.content).where(c.trace_id == owner, c.ref_id == ref_id, c.version == version)
    ).scalar()


def snapshot_owner_text(r: Reader, ref_id: str, version: str) -> str | None:
    """The content of a pair wherever it was made (grants carry pairs, not owners)."""
    c = t.context_ref_snapshots.c
    return r.conn.execute(
        select(c.content).where(c.ref_id == ref_id, c.version == version).limit(1)
    ).scalar()


def grants_held(r: Reader, holder: str) -> list[RefGrant]:
    return _grants(r, t.delegation_grants.c.trace_id == holder)


def grants_made(r: Reader, granter: str) -> list[RefGrant]:
    return _grants(r, t.delegation_grants.c.granted_by == granter)


def _grants(r: Reader, where: Any) -> list[RefGrant]:
    c = t.delegation_grants.c
    rows = list(r.conn.execute(select(t.delegation_grants).where(where).order_by(c.id)))
    read = _read_keys(r, {row.trace_id for row in rows})
    return [
        RefGrant(
            m.trace_id,
            m.ref_id,
            m.version,
            m.kind,
            int(m.chars),
            m.granted_by,
            int(m.granted_at_sequence),
            (m.trace_id, m.ref_id, m.version, int(m.granted_at_sequence)) in read,
            m.dropped_reason,
            int(m.id),
        )
        for m in rows
    ]


def _read_keys(r: Reader, holders: set[str]) -> set[tuple[str, str, str, int]]:
    c = t.run_events.c
    if not holders:
        return set()
    q = select(c.trace_id, c.payload).where(c.trace_id.in_(holders), c.type == READ_EVENT)
    return {
        (tid, str(p["ref_id"]), str(p["version"]), int(p["granted_at_sequence"]))
        for tid, p in r.conn.execute(q)
        if isinstance(p, dict) and "granted_at_sequence" in p
    }


def validations(r: Reader, trace_id: str) -> list[dict[str, Any]]:
    c = t.run_events.c
    q = select(c.payload).where(c.trace_id == trace_id, c.type == VALIDATION_EVENT).order_by(c.id)
    return [p for (p,) in r.conn.execute(q) if isinstance(p, dict)]
