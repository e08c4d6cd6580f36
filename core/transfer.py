"""Copy traces between stores (a local file and a team store, either way), losslessly.

A copy is the lossless export (``core/exporters/ctxlens_json.py``) fed straight into the
lossless import (``core/importers/ctxlens_json.py``) without a file in between: messages
stream from the source page by page while the destination writes them in ONE transaction.
So an interrupted copy leaves no partial trace, and running it again finishes the job.
A trace already at the destination is compared by the sha256 of its export: identical →
skipped; different → reported as a conflict and left alone (never overwritten).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import CtxlensError, IntegrityError, InvalidInputError
from core.exporters.ctxlens_json import (
    checkpoint_rows,
    iter_export,
    message_json,
    record_rows,
    session_rows,
    trace_header,
)
from core.fields_json import FieldsJson
from core.importers.ctxlens_json import import_data
from core.store.export_format import RECORD_TABLES
from core.store.reader import Reader
from core.store.store import Store

#: progress(trace_id, messages copied so far); may raise to abort (the copy rolls back).
Progress = Callable[[str, int], None]
PROGRESS_EVERY = 1000


@dataclass(frozen=True)
class CopyResult(FieldsJson):
    trace_id: str
    title: str
    status: str  # "copied" | "skipped" | "conflict"
    messages: int
    detail: str = ""


def export_digest(store: Store, trace_id: str) -> str:
    """sha256 of the trace's lossless export (equal digests = equal traces)."""
    h = hashlib.sha256()
    with store.read() as r:
        for chunk in iter_export(store, r, trace_id):
            h.update(chunk.encode("utf-8"))
    return h.hexdigest()


def copy_traces(
    source: Store,
    dest: Store,
    trace_ids: Sequence[str] = (),
    progress: Progress | None = None,
) -> list[CopyResult]:
    """Copy the given traces (id or unique prefix; default: all) from ``source`` to ``dest``."""
    if source.url == dest.url:
        raise InvalidInputError(f"{source.describe()}: source and destination are the same store")
    with source.read() as r:
        ids = [r.find_trace(t).id for t in trace_ids] if trace_ids else [t.id for t in r.traces()]
    return [copy_trace(source, dest, tid, progress) for tid in dict.fromkeys(ids)]


def copy_trace(
    source: Store, dest: Store, trace_id: str, progress: Progress | None = None
) -> CopyResult:
    existing = _compare_existing(source, dest, trace_id)
    if existing is not None:
        return existing
    with source.read() as r:
        tr = r.trace(trace_id)
        data = _export_data(source, r, trace_id, progress)
        try:
            import_data(dest, data, f"{source.describe()}#{trace_id}")
        except CtxlensError:
            # another copy may have won the race; judge by what is there now
            raced = _compare_existing(source, dest, trace_id)
            if raced is None:
                raise
            return raced
    if export_digest(dest, trace_id) != export_digest(source, trace_id):
        raise IntegrityError(
            f"{dest.describe()}: copy of trace {trace_id} does not export identically"
        )
    return CopyResult(trace_id, tr.title, "copied", tr.messages)


def _compare_existing(source: Store, dest: Store, trace_id: str) -> CopyResult | None:
    with dest.read() as r:
        present = [t for t in r.traces() if t.id == trace_id]
    if not present:
        return None
    there = present[0]
    if export_digest(dest, trace_id) == export_digest(source, trace_id):
        return CopyResult(trace_id, there.title, "skipped", there.messages, "already present")
    with source.read() as r:
        here = r.trace(trace_id).messages
    return CopyResult(
        trace_id,
        there.title,
        "conflict",
        there.messages,
        f"destination has a different trace with this id ({there.messages} messages there, "
        f"{here} here); left unchanged",
    )


def _export_data(
    source: Store, r: Reader, trace_id: str, progress: Progress | None
) -> dict[str, Any]:
    """The export as the importer's dict, messages as a lazy stream (memory = one page)."""
    data: dict[str, Any] = {
        **trace_header(r.trace(trace_id)),
        "messages": _messages(r, trace_id, progress),
    }
    for table in RECORD_TABLES:
        data[table] = record_rows(r, trace_id, table)
    data["checkpoints"] = checkpoint_rows(r, trace_id, source.read_checkpoint)
    data["sessions"] = session_rows(r, trace_id)
    return data


def _messages(r: Reader, trace_id: str, progress: Progress | None) -> Iterator[dict[str, Any]]:
    n = 0
    for m in r.all_messages(trace_id):
        yield message_json(m)
        n += 1
        if progress is not None and n % PROGRESS_EVERY == 0:
            progress(trace_id, n)
    if progress is not None:
        progress(trace_id, n)
