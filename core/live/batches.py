"""The ``watch_batches`` rows: how far each watched file was read, batch by batch."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from core.store import schema as t
from core.store.reader import Reader
from core.store.writer import Writer


@dataclass(frozen=True)
class Batch:
    path: str
    trace_id: str
    start: int
    end: int
    head_sha256: str
    inode: int | None
    format: str


def _batch(row: tuple[object, ...]) -> Batch:
    path, trace_id, start, end, head, inode, fmt = row
    return Batch(str(path), str(trace_id), int(start), int(end), str(head), inode, str(fmt))  # type: ignore[call-overload, arg-type]


_COLUMNS = (
    t.watch_batches.c.path,
    t.watch_batches.c.trace_id,
    t.watch_batches.c.start,
    t.watch_batches.c.end,
    t.watch_batches.c.head_sha256,
    t.watch_batches.c.inode,
    t.watch_batches.c.format,
)


def last_batch(r: Reader, path: str) -> Batch | None:
    c = t.watch_batches.c
    row = r.conn.execute(
        select(*_COLUMNS).where(c.path == path).order_by(c.id.desc()).limit(1)
    ).first()
    return _batch(tuple(row)) if row else None


def trace_batches(r: Reader, trace_id: str) -> list[Batch]:
    c = t.watch_batches.c
    rows = r.conn.execute(select(*_COLUMNS).where(c.trace_id == trace_id).order_by(c.id))
    return [_batch(tuple(row)) for row in rows]


def record_batch(w: Writer, b: Batch) -> None:
    w.insert_record(t.watch_batches, b)
