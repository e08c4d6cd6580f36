"""Trajectory export at the end of each turn (SPEC RUN-6, seed B 7.3): the lossless trace
JSON written to a folder, replaced atomically, one file per trace."""

from __future__ import annotations

from pathlib import Path

from core.atomic_write import write_atomically
from core.exporters.ctxlens_json import write_export
from core.store import Store


def export_trajectory(store: Store, trace_id: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{trace_id}.json"
    return write_atomically(target, lambda f: write_export(store, trace_id, f), ".trajectory-")
