"""The trace list straight from a SQLite store file with the standard library.

``ctxlens traces`` is a start-up-bound command: SQLAlchemy and the schema check would cost
several times the query. This reads the ``traces`` table with ``sqlite3`` when the file is a
ctxlens store at exactly this code's schema head (found by reading the migration chain
on disk, no Alembic); anything else returns ``None`` and the caller opens the ``Store``,
which migrates, or names what is wrong.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from core.agents import is_main_agent
from core.trace_record import Trace

T = TypeVar("T")


VERSIONS = Path(__file__).parent / "migrations" / "versions"
_REVISION = re.compile(r'^(down_revision|revision)\s*=\s*(?:"([^"]+)"|None)', re.MULTILINE)


def head_revision(folder: Path = VERSIONS) -> str | None:
    """The one revision no other migration names as its ``down_revision``."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in folder.glob("*.py"):
        for key, value in _REVISION.findall(script.read_text(encoding="utf-8")):
            if value:
                (revisions if key == "revision" else parents).add(value)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def figures_and_calls(
    target: str,
) -> tuple[tuple[list[Any], dict[str, Any], dict[str, Any]], list[tuple[Any, ...]]] | None:
    """What ``core/inspector/trace_list.py:assemble`` needs (the traces as ``Trace``s,
    calls per trace, message spans per trace) and ``(trace_id, call_index, model, usage
    JSON text, agent_name, head_sequence)`` of every model call (what pricing needs),
    through one connection and one schema check; ``None`` where the file is not a current
    SQLite store (a URL, missing, another revision, any sqlite3 error): the caller opens
    the Store instead."""
    return _query(target, lambda conn: (_figures(conn), _calls(conn)))


def _query(target: str, read: Callable[[sqlite3.Connection], T]) -> T | None:
    path = Path(target).expanduser()
    if "://" in target or not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=rw", uri=True)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        version = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        if [v for (v,) in version] != [head_revision()]:
            return None
        return read(conn)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _figures(conn: sqlite3.Connection) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    import json

    traces = [
        Trace(tid, title, source, created, head, n, json.loads(meta) if meta else None)
        for tid, title, source, created, n, head, meta in conn.execute(
            "SELECT id, title, source, created_at, message_count, head_sequence, metadata"
            " FROM traces ORDER BY created_at, id"
        )
    ]
    calls = calls_and_model(
        conn.execute(
            "SELECT trace_id, branch_type, model, count(*) FROM llm_calls"
            " GROUP BY trace_id, branch_type, model"
        )
    )
    spans = {
        tid: (lo, hi, int(n or 0))
        for tid, lo, hi, n in conn.execute(
            "SELECT trace_id, min(created_at), max(created_at),"
            " sum(CASE WHEN token_count > 0 THEN token_count ELSE 0 END)"
            " FROM messages GROUP BY trace_id"
        )
    }
    return traces, calls, spans


def calls_and_model(
    rows: Iterable[tuple[str, str | None, str | None, int]],
) -> dict[str, tuple[int, str | None]]:
    """Per trace: its call count and the model that stands for it, from rows of (trace,
    branch type, model, calls). The model is the one the main agent
    (``core/agents.py:is_main_agent``) called most (else the one called most by any agent):
    a session of 152 Opus calls with 3 Sonnet subagent calls is an Opus session, whatever
    the names' alphabetical order."""
    totals: dict[str, int] = {}
    best: dict[str, tuple[bool, int, str]] = {}
    for tid, branch, model, n in rows:
        totals[tid] = totals.get(tid, 0) + int(n)
        if model:
            rank = (is_main_agent(branch), int(n), model)
            if tid not in best or rank > best[tid]:
                best[tid] = rank
    return {tid: (n, best[tid][2] if tid in best else None) for tid, n in totals.items()}


def _calls(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT trace_id, call_index, model, usage, agent_name, head_sequence FROM llm_calls"
    ).fetchall()
