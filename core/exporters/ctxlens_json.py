"""Lossless JSON export of one trace: every message of every branch and every record.

Export → import into an empty store → export gives byte-identical output: surrogate row ids
and the storage-only line index are left out; everything else is kept, checkpoint blobs
included (base64), so the file stands alone.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import IO, Any

from core.canonical import canonical_json
from core.errors import NotFoundError
from core.records import Checkpoint, Message, Trace
from core.store.export_format import FORMAT, NATURAL_IDS, RECORD_TABLES, VERSION, binary_columns
from core.store.message_fields import export_json
from core.store.reader import Reader
from core.store.store import Store
from core.undated import created_recorded


def message_json(m: Message, recorded: bool = True) -> dict[str, Any]:
    """A message of the export: its stored fields and ``created_recorded`` (false where
    ``created_at`` is the fill of a message the source gave no time, ``core/undated.py``;
    a re-import reads that from the trace's metadata, so the key is derived, not stored)."""
    return {**export_json(m), "created_recorded": recorded}


def _dump(obj: Any) -> str:
    return canonical_json(obj)


def _strip(row: dict[str, Any], keep_id: bool = False) -> dict[str, Any]:
    drop = ("trace_id",) if keep_id else ("id", "trace_id")
    return {k: v for k, v in row.items() if k not in drop}


def trace_header(tr: Trace) -> dict[str, Any]:
    """The export's first keys: format, version and the trace row."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "trace": {
            "id": tr.id,
            "title": tr.title,
            "source": tr.source,
            "created_at": tr.created_at,
            "head": tr.head,
            "metadata": tr.metadata,
        },
    }


def record_rows(reader: Reader, trace_id: str, table: str) -> list[dict[str, Any]]:
    """One per-trace table as exported (surrogate ids dropped, natural ids kept; bytes
    columns, such as a proxied request's body, as base64)."""
    binary = binary_columns(table)
    return [
        _strip(_base64(r, binary), table in NATURAL_IDS) for r in reader.table_rows(table, trace_id)
    ]


def _base64(row: dict[str, Any], binary: frozenset[str]) -> dict[str, Any]:
    if not binary:
        return row
    return {
        k: base64.b64encode(v).decode("ascii") if k in binary and v is not None else v
        for k, v in row.items()
    }


def checkpoint_rows(
    reader: Reader, trace_id: str, read_blob: Callable[[Checkpoint], bytes]
) -> list[dict[str, Any]]:
    """Checkpoint metadata with each blob inlined (base64); a blob the store has lost is
    ``blob_b64: null, blob_missing: true``, and the rest still exports."""
    return [
        {
            "generation": cp.generation,
            "type": cp.type,
            "object_key": cp.object_key,
            "token_count": cp.token_count,
            "sha256": cp.sha256,
            "size": cp.size,
            "created_at": cp.created_at,
            **_blob(cp, read_blob),
        }
        for cp in reader.checkpoints(trace_id)
    ]


def _blob(cp: Checkpoint, read_blob: Callable[[Checkpoint], bytes]) -> dict[str, Any]:
    try:
        return {"blob_b64": base64.b64encode(read_blob(cp)).decode("ascii")}
    except NotFoundError:
        return {"blob_b64": None, "blob_missing": True}


def session_rows(reader: Reader, trace_id: str) -> list[dict[str, Any]]:
    """Sessions with their turns nested."""
    return [
        {
            **_strip(s),
            "id": s["id"],
            "turns": [
                _strip({k: v for k, v in t.items() if k != "session_id"})
                for t in reader.turns(s["id"])
            ],
        }
        for s in reader.sessions(trace_id)
    ]


def iter_export(store: Store, reader: Reader, trace_id: str) -> Iterator[str]:
    """The export as text chunks (messages streamed page by page)."""
    tr = reader.trace(trace_id)
    yield _dump(trace_header(tr))[:-1] + ',\n"messages":['
    dated = created_recorded(tr.metadata)
    first = True
    for m in reader.all_messages(trace_id):
        yield ("\n" if first else ",\n") + _dump(message_json(m, dated(m.sequence)))
        first = False
    yield "]"
    for table in RECORD_TABLES:
        yield f',\n"{table}":' + _dump(record_rows(reader, trace_id, table))
    yield ',\n"checkpoints":' + _dump(checkpoint_rows(reader, trace_id, store.read_checkpoint))
    yield ',\n"sessions":' + _dump(session_rows(reader, trace_id)) + "}\n"


def write_export(store: Store, trace_id: str, out: IO[str]) -> None:
    with store.read() as r:
        tid = r.find_trace(trace_id).id
        for chunk in iter_export(store, r, tid):
            out.write(chunk)


def export_text(store: Store, trace_id: str) -> str:
    with store.read() as r:
        tid = r.find_trace(trace_id).id
        return "".join(iter_export(store, r, tid))
