"""The delegation tables on SQLite and PostgreSQL: append-only versions, grants ended (not
deleted) by a revision or by ``Writer.rewind``, reads as events, the demo end to end."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from core.delegation.anchor import normalize_anchor
from core.delegation.brief import normalize_brief
from core.delegation.normal import DelegationError
from core.delegation.snapshots import RefGrant, dropped_by_revision, dropped_by_rewind
from core.delegation.store import (
    add_brief_version,
    add_grants,
    brief_versions,
    drop_grants,
    grants_held,
    grants_made,
    load_anchor,
    record_read,
    register_child,
    register_root,
)
from core.records import NewMessage
from core.store import Store
from core.store import schema as t

ANCHOR = {"objective": "o", "completion_criteria": ["c"], "constraints": ["k"]}


def _rows(s: Store, table: Any) -> list[dict[str, Any]]:
    with s.read() as r:
        return [
            dict(x._mapping) for x in r.conn.execute(select(table).order_by(*table.primary_key))
        ]


def test_store_versions_grants_and_rewind(store_url: str) -> None:
    with Store.open(store_url) as s:
        root = s.create_trace("root").id
        s.append(root, [NewMessage("user", f"m{n}") for n in range(6)])
        child = s.create_trace("child").id
        anchor = normalize_anchor(ANCHOR)
        with s.write() as w:
            here = register_root(w, root, anchor, ["agent"])
            kid = register_child(w, child, here, "root/kid", 3, ["agent"])
            add_brief_version(
                w, child, normalize_brief({"objective": "a", "completion_criteria": ["c"]}), None, 3
            )
            grants = add_grants(
                w,
                [RefGrant(child, "brief:root", "0" * 64, "task_brief", 9, root, n) for n in (2, 4)],
            )
        assert kid.anchor_sha256 == anchor.sha256 and kid.budget_root == root
        first = _rows(s, t.task_protocol_versions)
        with s.write() as w:
            add_brief_version(
                w, child, normalize_brief({"objective": "b", "completion_criteria": ["c"]}), None, 5
            )
            record_read(w, grants[0], 7)
        assert _rows(s, t.task_protocol_versions)[: len(first)] == first  # old rows unchanged
        with s.read() as r:  # the rule the store's rewind applies (one UPDATE there)
            expected = {g.id for g in dropped_by_rewind(grants_made(r, root), root, 3)}
        s.rewind(root, 3)  # the grant made at #4 ends, the one at #2 stays
        with s.read() as r:
            held = grants_held(r, child)
            assert [(g.granted_at_sequence, g.read, g.dropped) for g in held] == [
                (2, True, None),
                (4, False, "rewind to 3"),
            ]
            assert {g.id for g in held if g.dropped == "rewind to 3"} == expected
            assert [v.brief.objective for v in brief_versions(r, child)] == ["a", "b"]
            assert load_anchor(r, root) == anchor
        with s.write() as w:
            drop_grants(w, dropped_by_revision(grants_held(w.read, child), child))
        with s.read() as r:
            assert [g.dropped for g in grants_held(r, child)] == ["revised", "rewind to 3"]
            count = r.conn.execute(select(func.count()).select_from(t.delegation_grants)).scalar()
        assert count == 2  # nothing deleted
        with s.write() as w, pytest.raises(DelegationError, match="already part"):
            register_root(w, root, anchor, [])


def test_store_demo_runs_on_postgresql(pg_url: str) -> None:
    """(The SQLite run: ``test_delegation_run.py``.)"""
    from core.demo.delegation import run_delegation

    with Store.open(pg_url) as s:
        result = run_delegation(s)
    names = []

    def walk(n: dict[str, Any]) -> None:
        names.append(n["name"])
        for c in n["children"]:
            walk(c)

    walk(result["delegation"])
    assert names == ["root", "root/scout", "root/probe", "root/analyst", "root/analyst/detail"]
