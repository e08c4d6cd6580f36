"""Importing paths into a store: the one entry point the CLI and the GUI call.

``plan`` turns paths (files, folders) into import units; ``import_paths`` writes each unit
in its own transaction, skips units whose content was imported before, reports progress in
bytes and stops at a cancel request, rolling back the unit being written.
"""

from __future__ import annotations

import hashlib
import importlib
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

from sqlalchemy import func, select

from core.errors import CtxlensError, ImportCancelled, InvalidInputError
from core.importers import claude_code
from core.importers.base import ImportContext, ImportResult, ImportUnit, Progress
from core.importers.counting import CountsAhead, LazyPool, fill_pending
from core.importers.detect import sniff
from core.importers.formats import FORMATS
from core.importers.gcpause import collector_paused
from core.importers.non_traces import refusal
from core.importers.reading import first_record
from core.importers.skips import (
    SUFFIXES,
    Skipped,
    not_read,
    openhands_settings,
    other_format,
    summary,
)
from core.importers.times import naive_times_read
from core.importers.walk import FILE, FOLDER, FolderWalk, classify, open_file
from core.store import schema as t
from core.store.reader import Reader
from core.store.store import Store

#: Importer module of each format (each has ``run(writer, context, unit)``).
MODULES = {
    "claude-code": "core.importers.claude_code",
    "codex": "core.importers.codex",
    "otel": "core.importers.otel",
    "inspect": "core.importers.inspect_ai",
    "openhands": "core.importers.openhands",
    "swe-agent": "core.importers.swe_agent",
    "openai": "core.importers.openai_chat",
    "ctxlens": "core.importers.ctxlens_json",
}
EVENT_GLOB = "event-*.json"


def importer(fmt: str) -> ModuleType:
    return importlib.import_module(MODULES[fmt])


# -- planning ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """What importing some paths will do: the units, and the files of folders passed over."""

    units: list[ImportUnit] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def plan(paths: Iterable[str | Path], fmt: str = "auto") -> list[ImportUnit]:
    """The import units for the given files and folders, in a stable order."""
    return plan_paths(paths, fmt).units


def plan_paths(paths: Iterable[str | Path], fmt: str = "auto") -> Plan:
    """``plan`` with the files a folder walk did not import, each with the reason a direct
    import of it would give (``core/importers/skips.py``)."""
    if fmt != "auto" and fmt not in FORMATS:
        raise InvalidInputError(f"unknown format {fmt!r} (one of: auto, {', '.join(FORMATS)})")
    out = Plan()
    for raw in paths:
        path = Path(raw)
        kind = classify(path)  # from stat: nothing is opened before its type is known
        if kind == FOLDER:
            walk = FolderWalk(path)
            skipped: list[Skipped] = []
            found = _plan_folder(path, fmt, walk, skipped)
            skipped += [Skipped(str(p), f"{p}: {why}") for p, why in walk.passed]
            if not found:
                raise InvalidInputError(
                    f"{path}: no trace files of a known format in this folder{summary(skipped)}"
                )
            out.units.extend(found)
            out.skipped.extend(sorted(skipped, key=lambda s: s.path))
        elif kind == FILE:
            out.units.append(_plan_file(path, fmt))
        else:
            raise InvalidInputError(f"{path}: {kind}")
    return out


FORCE_HINT = "`ctxlens import FILE --format NAME` forces one"
"""The end of the unknown-format error (the import dialog words it its own way)."""


def _plan_file(path: Path, fmt: str) -> ImportUnit:
    detected = sniff(path) if fmt == "auto" else fmt
    if detected is None or (fmt != "auto" and _maybe_chatml(path)):
        why = refusal(path)  # a known file that is not a trace: say what it is
        if why is not None:
            raise InvalidInputError(why)
    if detected is None:
        raise InvalidInputError(unknown_format(path))
    if detected == "claude-code" and not path.name.startswith("agent-"):
        return ImportUnit(detected, path, (path, *claude_code.subagent_files(path)))
    if detected == "openhands" and path.name == "base_state.json":
        events = _event_files(path.parent)
        if not events:
            raise InvalidInputError(openhands_settings(path))
        return ImportUnit(detected, path, (path, *events))
    if detected == "openhands" and path.match(EVENT_GLOB):
        return _conversation_of(path)
    return ImportUnit(detected, path, (path,))


def _maybe_chatml(path: Path) -> bool:
    """A forced format is checked against the known non-traces only when the head could
    be one (a Langfuse ChatML map's parse results have ``success``)."""
    with open_file(path) as f:
        return b'"success"' in f.read(1 << 16)


def _conversation_of(event: Path) -> ImportUnit:
    """One event file of an OpenHands conversation folder stands for the whole folder (its
    events alone are a fragment: a reply without the request, a result without its call)."""
    folder = event.parent
    home = folder.parent if folder.name == "events" else folder
    state = home / "base_state.json"
    members = ((state,) if state.is_file() else ()) + _event_files(home)
    return ImportUnit("openhands", home, members or (event,))


def _event_files(folder: Path) -> tuple[Path, ...]:
    found = sorted(folder.glob(EVENT_GLOB))
    if not found and (folder / "events").is_dir():
        found = sorted((folder / "events").glob(EVENT_GLOB))
    return tuple(p for p in found if classify(p) == FILE)


def _plan_folder(
    folder: Path, fmt: str, walk: FolderWalk, skipped: list[Skipped]
) -> list[ImportUnit]:
    """Units under one folder; each real folder is planned once (``walk``). A file not
    imported, nor read with another unit, is added to ``skipped`` with its reason."""
    if not walk.enter(folder):
        return []
    events = _event_files(folder)
    if events and fmt in ("auto", "openhands"):
        state = folder / "base_state.json"
        members = ((state,) if state.is_file() else ()) + events
        return [ImportUnit("openhands", folder, members)]
    files, folders = walk.entries(folder)
    skipped += [not_read(p) for p in files if not p.name.endswith(SUFFIXES)]
    detected = {p: _sniff_in_folder(p) for p in files if p.name.endswith(SUFFIXES)}
    sessions = {
        p.stem
        for p, f in detected.items()
        if isinstance(f, str) and f == "claude-code" and not p.name.startswith("agent-")
    }
    units: list[ImportUnit] = []
    for p, found in detected.items():
        if isinstance(found, Skipped):
            skipped.append(found)
            continue
        if fmt != "auto" and found != fmt:
            skipped.append(other_format(p, found, fmt))
            continue
        if found == "claude-code" and p.name.startswith("agent-"):
            owner = (first_record(p) or {}).get("sessionId")
            if owner in sessions:
                continue  # imported with its session
        try:
            units.append(_plan_file(p, found))
        except InvalidInputError as exc:  # e.g. settings without events: not a trace
            skipped.append(Skipped(str(p), str(exc), found))
    for sub in folders:
        if sub.name not in sessions:
            units.extend(_plan_folder(sub, fmt, walk, skipped))
    return units


def _sniff_in_folder(path: Path) -> str | Skipped:
    """The format of a file in a walked folder, else why it is skipped: what a direct
    import of it would say (a known non-trace, an unreadable file, an unknown format)."""
    try:
        found = sniff(path)
    except InvalidInputError as exc:
        return Skipped(str(path), str(exc))
    if found is not None:
        return found
    why = refusal(path)
    if why is not None:
        return Skipped(str(path), why)
    return Skipped(str(path), unknown_format(path))


def unknown_format(path: Path) -> str:
    return f"{path}: not a trace file of a known format ({', '.join(FORMATS)}); {FORCE_HINT}"


# -- importing --------------------------------------------------------------------------
def content_hash(unit: ImportUnit) -> str:
    """Identity of a unit's content (file bytes in order, not names): re-import detection."""
    outer = hashlib.sha256(unit.format.encode())
    for path in unit.files:
        inner = hashlib.sha256()
        with open_file(path) as f:
            while chunk := f.read(1 << 20):
                inner.update(chunk)
        outer.update(inner.digest())
    return outer.hexdigest()


def summarize(r: Reader, trace_id: str, path: str, fmt: str) -> ImportResult:
    """The result row for a trace already in the store (derived from the store)."""
    tr = r.trace(trace_id)
    m = t.messages.c
    calls = 0
    for (tool_calls,) in r.conn.execute(
        select(m.tool_calls).where(m.trace_id == trace_id, m.tool_calls.is_not(None))
    ):
        calls += len(tool_calls or ())
    subagents = r.conn.execute(
        select(func.count(func.distinct(m.branch_id))).where(
            m.trace_id == trace_id, m.branch_type == "subagent"
        )
    ).scalar_one()
    return ImportResult(
        path=path,
        format=fmt,
        trace_id=trace_id,
        messages=tr.messages,
        tool_calls=calls,
        compactions=len(r.compactions(trace_id)),
        subagents=int(subagents),
        llm_calls=r.llm_call_count(trace_id),
    )


def import_unit(store: Store, unit: ImportUnit, ctx: ImportContext) -> list[ImportResult]:
    """Import one unit in one transaction (nothing of it is kept if it fails).

    A re-import is found by the content hash of the unit's files. When no earlier import had
    a unit of this size it cannot be one, so the hash is computed on a thread beside the
    import (hashlib lets go of the GIL) and checked just before the commit; otherwise it is
    computed first and a re-import is not read at all.
    """
    nbytes = sum(_size(p) for p in unit.files)
    with store.read() as r:
        maybe_again = r.may_be_imported(nbytes)
    hashing: Future[str] | None = None
    if maybe_again:
        digest = content_hash(unit)
        with store.read() as r:
            existing = r.imported(digest)
            if existing:
                return _duplicates(r, unit, existing)
    else:
        hashing = _HASHER.get().submit(content_hash, unit)
    module = importer(unit.format)
    ctx.warnings = []
    ctx.where = str(unit.main)
    ctx.finite_json = True
    ctx.naive_from = naive_times_read()
    try:
        with store.write() as w, collector_paused():
            results: list[ImportResult] = module.run(w, ctx, unit)
            if results and not any(r.messages or r.warnings for r in results):
                raise InvalidInputError(f"{unit.main}: no messages in it; nothing imported")
            if hashing is not None:
                digest = hashing.result()
                existing = w.read.imported(digest)  # imported meanwhile by someone else
                if existing:
                    raise _AlreadyImported(existing)
            ids = [res.trace_id for res in results]
            w.record_import(digest, ids, str(unit.path), unit.format, nbytes)
    except _AlreadyImported as again:
        with store.read() as r:
            return _duplicates(r, unit, again.trace_ids)
    except CtxlensError:
        raise
    except RecursionError:
        raise InvalidInputError(f"{ctx.where}: data nested too deeply to import") from None
    except OSError as exc:  # a file removed or made unreadable since the plan
        raise unreadable(exc, unit) from None
    except Exception as exc:
        raise InvalidInputError(
            f"{ctx.where}: cannot import this record ({type(exc).__name__}: {exc})"
        ) from None
    finally:
        ctx.naive_from = None
    return results


def unreadable(exc: OSError, unit: ImportUnit) -> InvalidInputError:
    """A file of ``unit`` that could not be read, in the words a direct import of it gives
    (``walk.classify``: "no such file or folder", "cannot read: Permission denied")."""
    path = Path(exc.filename) if exc.filename else unit.main
    kind = classify(path)
    words = kind if kind not in (FILE, FOLDER) else f"cannot read: {exc.strerror or exc}"
    return InvalidInputError(f"{path}: {words}")


class _AlreadyImported(Exception):
    """Rolls back an import whose content turned out to be in the store already."""

    def __init__(self, trace_ids: list[str]) -> None:
        super().__init__("already imported")
        self.trace_ids = trace_ids


def _duplicates(r: Reader, unit: ImportUnit, trace_ids: list[str]) -> list[ImportResult]:
    return [
        replace(
            summarize(r, tid, str(unit.path), unit.format),
            duplicate=True,
            warnings=(f"already imported as trace {tid}",),
        )
        for tid in trace_ids
    ]


_HASHER = LazyPool(1, "ctxlens-import-hash")
"""One thread for content hashes computed beside imports."""


def import_paths(
    store: Store,
    paths: Sequence[str | Path],
    fmt: str = "auto",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    stop_on_error: bool = True,
    counts: CountsAhead | None = None,
    units: Sequence[ImportUnit] | None = None,
) -> list[ImportResult]:
    """Import files and folders; one result per trace written (or found already imported).

    ``progress(done_bytes, total_bytes)`` is called from this thread as files are read;
    setting ``cancel`` stops at the next check, rolls back the unit being written and
    returns the results of the units finished before. With ``stop_on_error=False`` a
    unit that fails gives a result whose ``error`` says why, and the others still import.
    ``counts``: count tokens while reading (``import_counted``); else they stay pending.
    ``units``: the plan of ``paths`` when the caller made it already (``plan_paths``), so
    the files are not sniffed twice.
    """
    if units is None:
        units = plan(paths, fmt)
    total = sum(_size(p) for u in units for p in u.files)
    ctx = ImportContext(progress=progress, cancel=cancel, total_bytes=total, counts=counts)
    results: list[ImportResult] = []
    for unit in units:
        if cancel is not None and cancel.is_set():
            break
        try:
            results.extend(import_unit(store, unit, ctx))
        except ImportCancelled:
            break
        except CtxlensError as exc:
            if stop_on_error:
                raise
            results.append(_failed(unit, str(exc)))
    if progress is not None and not (cancel is not None and cancel.is_set()):
        progress(total, total)
    return results


def import_counted(
    store: Store,
    paths: Sequence[str | Path],
    fmt: str = "auto",
    stop_on_error: bool = True,
    units: Sequence[ImportUnit] | None = None,
    cancel: threading.Event | None = None,
) -> list[ImportResult]:
    """The whole ``ctxlens import``: ``import_paths`` with every message's exact token count
    (TOK-1) counted on worker threads while the files are read and stored with its row
    (``CountsAhead``); a trace an importer left anything pending in is filled in after the
    commit (``fill_pending``). A CLI has nothing to show before the counts are in.
    ``cancel``: as ``import_paths``' (Ctrl-C: the finished traces are returned, counted)."""
    with CountsAhead() as ahead:
        results = import_paths(
            store,
            paths,
            fmt,
            cancel=cancel,
            stop_on_error=stop_on_error,
            counts=ahead,
            units=units,
        )
    todo = [r.trace_id for r in results if not (r.error or r.duplicate)]
    fill_pending(store, [tid for tid in todo if tid not in ahead.complete])
    return results


def _failed(unit: ImportUnit, error: str) -> ImportResult:
    return ImportResult(str(unit.path), unit.format, "", 0, 0, 0, 0, error=error)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
