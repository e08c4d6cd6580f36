"""Bring the SQLite full-text index up to date with the messages appended since.

The index holds each message's searchable text (content, tool name, each tool call's name
and arguments) under the message's row id. ``catch_up`` indexes rows with a larger id than
the index's newest, in batches, in the caller's write transaction. PostgreSQL needs none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
from sqlalchemy import Connection, select, text

from core.store import schema as t
from core.store.fulltext import FTS_TABLE

BATCH = 5000


def indexed_up_to(conn: Connection) -> int:
    row = conn.execute(text(f"SELECT rowid FROM {FTS_TABLE} ORDER BY rowid DESC LIMIT 1"))
    return int(row.scalar() or 0)


def pending_rows(conn: Connection) -> int:
    """Messages not in the index yet (0 on PostgreSQL)."""
    if conn.dialect.name != "sqlite":
        return 0
    newest = conn.execute(select(t.messages.c.id).order_by(t.messages.c.id.desc()).limit(1))
    return max(0, int(newest.scalar() or 0) - indexed_up_to(conn))


def catch_up(conn: Connection, progress: Callable[[int], None] | None = None) -> int:
    """Index every message appended since the last catch-up; returns how many."""
    if conn.dialect.name != "sqlite":
        return 0
    done = 0
    for batch in _batches(conn, indexed_up_to(conn)):
        conn.exec_driver_sql(f"INSERT INTO {FTS_TABLE}(rowid, body) VALUES (?, ?)", batch)
        done += len(batch)
        if progress is not None:
            progress(done)
    return done


def searchable_text(content: str, name: str | None, tool_calls: Any) -> str:
    parts = [content or "", name or ""]
    for call in _calls(tool_calls):
        inner = call.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else call
        parts.append(str(fn.get("name") or ""))
        args = fn.get("arguments")
        parts.append(args if isinstance(args, str) else orjson.dumps(args).decode())
    return " ".join(p for p in parts if p)


def _batches(conn: Connection, after: int) -> Iterator[list[tuple[int, str]]]:
    m = t.messages.c
    while True:
        q = (
            select(m.id, m.content, m.name, m.tool_calls)
            .where(m.id > after)
            .order_by(m.id)
            .limit(BATCH)
        )
        rows = conn.execute(q).all()
        if not rows:
            return
        yield [(r.id, searchable_text(r.content, r.name, r.tool_calls)) for r in rows]
        after = rows[-1].id


def _calls(tool_calls: Any) -> list[dict[str, Any]]:
    if isinstance(tool_calls, str):
        try:
            tool_calls = orjson.loads(tool_calls)
        except orjson.JSONDecodeError:
            return []
    if not isinstance(tool_calls, list):
        return []
    return [c for c in tool_calls if isinstance(c, dict)]
