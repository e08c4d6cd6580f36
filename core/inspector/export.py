"""Exporting the shown trace from the window: lossless ctxlens JSON or OTLP JSON, written
to a temporary file beside the target and moved into place (a failed export never leaves
half a file where the user expects one). The CLI's ``export -o`` uses the same writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from core.atomic_write import write_atomically
from core.errors import CtxlensError

if TYPE_CHECKING:
    from core.store import Store

#: format -> (label for a menu or file dialog, file name suffix, shortcut in the window)
FORMATS: dict[str, tuple[str, str, str]] = {
    "json": ("ctxlens JSON (lossless, re-importable)", ".ctxlens.json", "Ctrl+E"),
    "otlp": ("OTLP JSON (OpenTelemetry gen_ai spans)", ".otlp.json", "Ctrl+Alt+E"),
}


def writer(fmt: str) -> Callable[[Store, str, IO[str]], None]:
    if fmt == "otlp":
        from core.exporters.otlp import write_export
    elif fmt == "json":
        from core.exporters.ctxlens_json import write_export
    else:
        raise CtxlensError(f"unknown export format {fmt!r} (json or otlp)")
    return write_export


def export_file(store: Store, trace_id: str, fmt: str, path: str | Path) -> Path:
    """Write trace ``trace_id`` as ``fmt`` to ``path`` atomically."""
    write = writer(fmt)
    target = Path(path)
    if not target.parent.is_dir():
        raise CtxlensError(f"{target}: folder {target.parent} does not exist")
    return write_atomically(target, lambda f: write(store, trace_id, f), ".ctxlens-export-")


def suggested_name(trace_id: str, fmt: str) -> str:
    safe = "".join(c for c in trace_id if c.isalnum() or c in "-_")[:24] or "trace"
    return safe + FORMATS[fmt][1]
