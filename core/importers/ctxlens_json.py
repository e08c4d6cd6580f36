"""Import a lossless ctxlens JSON export (``core/exporters/ctxlens_json.py``) back."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

from core.errors import ConflictError, InvalidInputError
from core.importers.base import ImportContext, ImportResult, ImportUnit
from core.records import Message
from core.store import schema as t
from core.store.export_format import FORMAT, RECORD_TABLES, binary_columns, check_row
from core.store.message_fields import message_from
from core.store.store import Store
from core.store.writer import Writer

#: Messages per INSERT when restoring (bounded memory, few round trips).
BATCH = 1000


def looks_like(head: bytes) -> bool:
    return b'"format":"ctxlens-trace"' in head[:200] or b'"format": "ctxlens-trace"' in head[:200]


def import_file(store: Store, path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path}:{line}" if line else str(path)
        raise InvalidInputError(f"{where}: not valid JSON: {exc}") from None
    return import_data(store, data, str(path))


def import_data(store: Store, data: dict[str, Any], where: str = "<data>") -> str:
    with store.write() as w:
        return write_data(w, data, where)


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    """Importer interface (``core/importers/api.py``): one export file, one trace."""
    from core.importers.api import summarize

    path = unit.main
    try:
        data = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"{path}:{line}" if line else str(path)
        raise InvalidInputError(f"{where}: not valid JSON: {exc}") from None
    ctx.advance(path.stat().st_size)
    tid = write_data(w, data, str(path))
    w.flush()
    return [summarize(w.read, tid, str(unit.path), "ctxlens")]


def write_data(w: Writer, data: dict[str, Any], where: str = "<data>") -> str:
    """Restore an export inside the caller's transaction. Every row is checked against
    its table first (``core/store/export_format.py:check_row``): a wrong value is an error
    naming the row and field, and nothing of the trace is written."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInputError(f"{where}: not a ctxlens trace export (field 'format')")
    try:
        return _write(w, data, where)
    except KeyError as exc:
        raise InvalidInputError(f"{where}: missing field {exc}") from None
    except (TypeError, AttributeError):
        raise InvalidInputError(f"{where}: not a ctxlens trace export's shape") from None


def _write(w: Writer, data: dict[str, Any], where: str) -> str:
    trace = data["trace"]
    if not isinstance(trace, dict):
        raise InvalidInputError(f"{where}: trace: not an object")
    check_row("traces", trace, f"{where}: trace")
    if w.read.conn.execute(select(t.traces.c.id).where(t.traces.c.id == trace["id"])).first():
        raise ConflictError(f"{where}: trace {trace['id']} is already in this store")
    w.create_trace(
        trace["title"], trace["source"], trace["metadata"], trace["id"], trace["created_at"]
    )
    batch: list[Message] = []
    for i, m in enumerate(data["messages"]):
        if not isinstance(m, dict):
            raise InvalidInputError(f"{where}: messages[{i}]: not an object")
        check_row("messages", m, f"{where}: messages[{i}]")
        try:
            batch.append(_message(trace["id"], m))
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"{where}: messages[{i}]: bad field {exc}") from None
        if len(batch) >= BATCH:
            w.restore_messages(batch)
            batch = []
    w.restore_messages(batch)
    w.set_head(trace["id"], trace["head"])
    for table in RECORD_TABLES:
        rows = [_record(table, row, trace["id"], f"{where}: {table}[{i}]")
                for i, row in enumerate(data.get(table, []))]  # fmt: skip
        w.insert_rows(table, rows)
    _checkpoints(w, trace["id"], data.get("checkpoints", []), where)
    for i, s in enumerate(data.get("sessions", [])):
        turns = s.pop("turns", [])
        check_row("sessions", s, f"{where}: sessions[{i}]")
        w.conn.execute(insert(t.sessions).values(**s, trace_id=trace["id"]))
        for j, turn in enumerate(turns):
            check_row("turns", turn, f"{where}: sessions[{i}].turns[{j}]")
            w.conn.execute(insert(t.turns).values(**turn, session_id=s["id"]))
    return str(trace["id"])


def _record(table: str, row: Any, trace_id: str, where: str) -> dict[str, Any]:
    """An exported row as stored: bytes columns back from base64; a proxied request's
    headers without credentials, whatever the file holds (they never reach a store)."""
    if not isinstance(row, dict):
        raise InvalidInputError(f"{where}: not an object")
    check_row(table, row, where)
    out = {**row, "trace_id": trace_id}
    for col in binary_columns(table):
        if out.get(col) is not None:
            try:
                out[col] = base64.b64decode(out[col], validate=True)
            except (ValueError, TypeError):
                raise InvalidInputError(f"{where}: field {col!r} is not base64") from None
    if table == "proxy_requests" and isinstance(out.get("headers"), dict):
        from core.store.headers import storable_headers

        out["headers"] = storable_headers(list(out["headers"].items()))
    return out


def message_from_json(trace_id: str, m: dict[str, Any]) -> Message:
    """A message of the export format back as a record."""
    return _message(trace_id, m)


def _message(trace_id: str, m: dict[str, Any]) -> Message:
    return message_from({**m, "trace_id": trace_id, "line": 0, "depth": 0})


def _checkpoints(w: Writer, trace_id: str, cps: list[dict[str, Any]], where: str) -> None:
    for i, cp in enumerate(cps):
        check_row("checkpoints", cp, f"{where}: checkpoints[{i}]")
        if cp["blob_b64"] is not None:  # None: the blob was missing from the exported store
            w.objects.put(cp["object_key"], base64.b64decode(cp["blob_b64"]))
        row = {k: v for k, v in cp.items() if k not in ("blob_b64", "blob_missing")}
        w.conn.execute(insert(t.checkpoints).values(**row, trace_id=trace_id))
