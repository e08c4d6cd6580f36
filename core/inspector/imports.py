"""Importing from the window (IMP-1/2 in the GUI): every path gets a row, nothing raises.

The window hands over whatever the user picked or dropped: files, folders, things that are
not traces. Each path is planned on its own, so one bad path is listed as an error while
the others still import; each unit is written in its own transaction by
``core/importers/api.py:import_paths`` (a failed or cancelled unit leaves nothing behind).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from core.errors import CtxlensError, ImportCancelled
from core.importers.api import import_paths, plan_paths
from core.importers.base import ImportResult, ImportUnit
from core.importers.counting import fill_pending
from core.store.store import Store

Status = Literal["imported", "already imported", "error", "skipped", "not imported (cancelled)"]
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ImportRow:
    path: str
    format: str
    status: Status
    trace_id: str = ""
    messages: int = 0
    detail: str = ""
    """The error, the reason it was skipped, or the warnings, of this row."""


@dataclass(frozen=True)
class ImportReport:
    rows: list[ImportRow] = field(default_factory=list)
    cancelled: bool = False

    @property
    def errors(self) -> list[ImportRow]:
        return [r for r in self.rows if r.status == "error"]

    @property
    def skipped(self) -> list[ImportRow]:
        """Files of the folders given that were not imported (each with its reason)."""
        return [r for r in self.rows if r.status == "skipped"]

    @property
    def new_traces(self) -> list[str]:
        return [r.trace_id for r in self.rows if r.status == "imported"]

    @property
    def first_trace(self) -> str | None:
        """The trace to show afterwards: the first new one, else the first found again."""
        ids = self.new_traces or [r.trace_id for r in self.rows if r.trace_id]
        return ids[0] if ids else None

    def headline(self) -> str:
        new = len(self.new_traces)
        again = sum(r.status == "already imported" for r in self.rows)
        parts = [f"imported {new} trace{'s' if new != 1 else ''}"]
        if again:
            parts.append(f"{again} already in the store")
        if self.errors:
            parts.append(f"{len(self.errors)} failed")
        if self.skipped:
            n = len(self.skipped)
            parts.append(f"{n} file{'s' if n != 1 else ''} skipped")
        if self.cancelled:
            parts.append("cancelled (the unit being read was rolled back)")
        return ", ".join(parts)


def import_for_window(
    store: Store,
    paths: Sequence[str | Path],
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    imported: Callable[[ImportReport], None] | None = None,
    count_progress: Progress | None = None,
    fmt: str = "auto",
) -> ImportReport:
    """Import what can be imported; every path ends up as rows (never an exception for bad
    input). After a cancel, paths not reached are listed as not imported.

    Then the token counts of the new traces are filled in (``fill_pending``): ``imported``
    gets the report first, so the window can show the traces while they are counted (a
    reader counts what is still pending); ``count_progress(done, total)`` in messages. A
    cancel while counting keeps every trace: what is not counted yet is counted on read.
    """
    rows: list[ImportRow] = []
    skipped: list[ImportRow] = []
    good: list[str | Path] = []
    units: list[ImportUnit] = []
    for p in paths:
        try:
            planned = plan_paths([p], fmt)
        except CtxlensError as exc:
            rows.append(ImportRow(str(p), "", "error", detail=str(exc)))
        else:
            good.append(p)
            units += planned.units
            skipped += [
                ImportRow(s.path, s.format or "", "skipped", detail=s.reason)
                for s in planned.skipped
            ]
    results = import_paths(
        store, good, fmt, progress=progress, cancel=cancel, stop_on_error=False, units=units
    )
    rows += [_row(r) for r in results] + skipped
    cancelled = cancel is not None and cancel.is_set()
    if cancelled:
        done = {r.path for r in results}
        rows += [
            ImportRow(str(u.path), u.format, "not imported (cancelled)")
            for u in units
            if str(u.path) not in done
        ]
    report = ImportReport(rows, cancelled)
    if imported is not None:
        imported(report)
    if not cancelled and report.new_traces:
        with contextlib.suppress(ImportCancelled):  # the rest is counted on read
            fill_pending(store, report.new_traces, progress=count_progress, cancel=cancel)
    return report


def _row(r: ImportResult) -> ImportRow:
    if r.error is not None:
        return ImportRow(r.path, r.format, "error", detail=r.error)
    status: Status = "already imported" if r.duplicate else "imported"
    return ImportRow(r.path, r.format, status, r.trace_id, r.messages, "; ".join(r.warnings))
