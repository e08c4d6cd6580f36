"""The trace's path and its first page read with ``sqlite3`` alone (issue 20: the rows on
screen before SQLAlchemy loads).

Importing SQLAlchemy, the schema and the store costs more CPU than everything else between
the window's first frame and the trace's rows. For a SQLite store file at exactly this
code's schema head (``core/store/quick.py:head_revision``, one query on
``alembic_version``), ``QuickStore`` answers the reads the timeline's first load makes
(``core/store/path_reads.py:PathReads``: the path's segments, compaction bands, branches
and row previews) with the same SQL the ``Reader`` compiles to, returning the same records.
Anything else (a server URL, an old schema that must migrate, a missing file, a message
whose token count is still pending) is ``None`` or ``NeedsStore``, and the caller opens the
``Store`` as before; it also opens it once the rows are painted, for everything after them.
The ``Reader`` stays the one reader for everything else; a test reads the same rows through
both.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from core.records import CompactionEvent, ToolCall, decode_items
from core.store.path_reads import IN_CHUNK, PathReads
from core.store.paths import LineInfo, Segment, path_segments, slice_segments
from core.store.preview_record import MessagePreview
from core.store.quick import head_revision

PENDING_TOKENS = -1
"""``core/store/triggers.py:PENDING_TOKENS`` (that module loads the schema; a test keeps
the two equal)."""


class NeedsStore(Exception):
    """The read needs the ``Store`` (a pending token count is counted by its reader)."""


class PathStore(Protocol):
    """A ``Store`` or a ``QuickStore``: read transactions of a ``PathReads``."""

    def read(self) -> Any: ...


_PREVIEWS = (
    "SELECT sequence, role, kind, goal_id, token_count, substr(content, 1, ?), tool_calls,"
    " tool_call_id, name, branch_type, agent_name,"
    " CAST(JSON_EXTRACT(metadata, '$.\"is_error\"') AS BOOLEAN)"
    " FROM messages WHERE trace_id = ? AND line = ? AND depth BETWEEN ? AND ? ORDER BY depth"
)
_LINES = (
    "SELECT line, parent_line, start_depth, start_sequence, tip_sequence, tip_depth,"
    " branch_type, branch_id FROM lines WHERE trace_id = ?"
)
_COMPACTIONS = (
    "SELECT trace_id, level, at_sequence, removed, context_after, tokens_before, tokens_after,"
    ' messages_before, messages_after, "trigger", summary_sequence, goal_id, details,'
    " created_at, id FROM compactions WHERE trace_id = ? ORDER BY id"
)


class QuickStore:
    """A current SQLite store file, read with ``sqlite3`` (a connection per read, so any
    thread may read: the timeline's path on the task runner, its pages on their own)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._uri = f"file:{quote(str(path))}?mode=rw"

    @classmethod
    def open(cls, target: str | Path) -> QuickStore | None:
        """The store at ``target`` if it is a SQLite file at this code's schema head."""
        text = str(target)
        path = Path(text).expanduser()
        if "://" in text or not path.is_file():
            return None
        store = cls(path.resolve())
        try:
            with store.read() as r:
                version = r.conn.execute("SELECT version_num FROM alembic_version").fetchall()
        except sqlite3.Error:
            return None
        return store if [v for (v,) in version] == [head_revision()] else None

    @contextmanager
    def read(self) -> Iterator[QuickReader]:
        """One read transaction (as ``Store.read``: a consistent snapshot)."""
        conn = sqlite3.connect(self._uri, uri=True)
        try:
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("BEGIN")
            yield QuickReader(conn)
        finally:
            conn.close()


class QuickReader(PathReads[MessagePreview]):
    """The ``PathReads`` reads, in ``sqlite3``; the same rows, order and records as the
    ``Reader``'s (``tests/core/test_first_page.py``)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def chosen_trace(self, trace_id: str | None) -> tuple[str, int | None] | None:
        """``(id, head)`` of the trace a start opens: ``trace_id`` (or its unique prefix,
        as ``Reader.find_trace``), else the newest (``Reader.traces``'s last); ``None``
        when there is none or it is not found (the ``Store`` names the problem)."""
        q = "SELECT id, head_sequence FROM traces"
        if trace_id is None:
            row = self.conn.execute(q + " ORDER BY created_at DESC, id DESC LIMIT 1").fetchone()
            return (str(row[0]), row[1]) if row else None
        found = self.conn.execute(q + " WHERE id = ?", (trace_id,)).fetchall()
        if not found:
            like = trace_id.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"
            found = self.conn.execute(q + " WHERE id LIKE ? ESCAPE '/' LIMIT 2", (like,)).fetchall()
        return (str(found[0][0]), found[0][1]) if len(found) == 1 else None

    def lines(self, trace_id: str) -> dict[int, LineInfo]:
        return {r[0]: LineInfo(*r) for r in self.conn.execute(_LINES, (trace_id,))}

    def segments(self, trace_id: str, head: int | None = None) -> list[Segment]:
        if head is None:
            row = self.conn.execute(
                "SELECT head_sequence FROM traces WHERE id = ?", (trace_id,)
            ).fetchone()
            if row is None:
                raise NeedsStore(f"trace {trace_id!r} not found")
            head = row[0]
            if head is None:
                return []
        found = self.positions(trace_id, [head]).get(head)
        if found is None:
            raise NeedsStore(f"message {head} not found in trace {trace_id!r}")
        return path_segments(self.lines(trace_id), *found)

    def positions(self, trace_id: str, sequences: Sequence[int]) -> dict[int, tuple[int, int]]:
        return {s: (ln, d) for s, ln, d in self._by_sequence("line, depth", trace_id, sequences)}

    def parents(self, trace_id: str, sequences: Sequence[int]) -> dict[int, int | None]:
        return {s: p for s, p in self._by_sequence("parent_sequence", trace_id, sequences)}

    def _by_sequence(
        self, columns: str, trace_id: str, sequences: Sequence[int]
    ) -> Iterator[tuple[Any, ...]]:
        """``(sequence, *columns)`` of each given message of the trace, ``IN_CHUNK`` at a
        time; unknown sequences are left out."""
        wanted = sorted(set(sequences))
        for i in range(0, len(wanted), IN_CHUNK):
            chunk = wanted[i : i + IN_CHUNK]
            q = (
                f"SELECT sequence, {columns} FROM messages WHERE trace_id = ?"
                f" AND sequence IN ({','.join('?' * len(chunk))})"
            )
            yield from self.conn.execute(q, (trace_id, *chunk))

    def compactions(self, trace_id: str) -> list[CompactionEvent]:
        out = []
        for row in self.conn.execute(_COMPACTIONS, (trace_id,)):
            tid, level, at, removed, after, *figures, details, created, cid = row
            items = decode_items(json.loads(after))
            more = {"details": _json(details), "created_at": created, "id": cid}
            out.append(
                CompactionEvent(tid, level, at, tuple(json.loads(removed)), items, *figures, **more)
            )
        return out

    def segments_page(
        self, trace_id: str, offset: int, limit: int, segments: list[Segment]
    ) -> list[MessagePreview]:
        """Previews, not whole messages, token counts as stored: what the path's reads
        need of them (``core/inspector/branches.py``: a fork's sequence)."""
        return self._previews(trace_id, offset, limit, segments, 0, counted=False)

    def main_path_previews(
        self, trace_id: str, offset: int, limit: int, segments: list[Segment], chars: int
    ) -> list[MessagePreview]:
        """As ``Reader.main_path_previews``; ``NeedsStore`` where a count is pending (the
        ``Reader`` counts it as it reads)."""
        return self._previews(trace_id, offset, limit, segments, chars, counted=True)

    def _previews(
        self,
        trace_id: str,
        offset: int,
        limit: int,
        segments: list[Segment],
        chars: int,
        counted: bool,
    ) -> list[MessagePreview]:
        out: list[MessagePreview] = []
        for s in slice_segments(segments, offset, limit):
            for row in self.conn.execute(_PREVIEWS, (chars, trace_id, s.line, s.first, s.last)):
                seq, role, kind, goal, tokens, content, calls, *rest, is_error = row
                if counted and tokens == PENDING_TOKENS:
                    raise NeedsStore(f"message {seq}'s token count is pending")
                error = None if is_error is None else bool(is_error)
                fields = (seq, role, kind, goal, tokens, content, _calls(calls), *rest, error)
                out.append(MessagePreview(*fields))
        return out


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _calls(text: str | None) -> tuple[ToolCall, ...]:
    value = _json(text)
    return tuple(ToolCall.from_json(c) for c in value) if value else ()
