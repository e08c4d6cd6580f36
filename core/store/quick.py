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
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

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


def list_traces(target: str) -> list[dict[str, Any]] | None:
    """``[{id, title, source, created_at, messages, head}]`` oldest first, or ``None`` when
    ``target`` is not a local store file at the current schema (use the ``Store``)."""
    return _query(target, _read)


def call_usages(target: str) -> list[tuple[Any, ...]] | None:
    """``(trace_id, call_index, model, usage JSON text, agent_name, head_sequence)`` of
    every model call (what pricing needs), or ``None`` as ``list_traces``."""
    return _query(target, _calls)


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


def _read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT id, title, source, created_at, message_count, head_sequence"
        " FROM traces ORDER BY created_at, id"
    )
    keys = ("id", "title", "source", "created_at", "messages", "head")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _calls(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT trace_id, call_index, model, usage, agent_name, head_sequence FROM llm_calls"
    ).fetchall()
