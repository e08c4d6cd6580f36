"""A file handed to ``ctxlens gui FILE`` (a double-click in a file manager): what to show.

A ctxlens store (any SQLite file) is opened as the store; any other file is imported into
the store first (a trace file of a known format; importing the same content twice finds
the trace imported before) and its trace is shown.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InvalidInputError

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(16) == SQLITE_MAGIC


def resolve(file: str, db: str, default_store: bool = False) -> tuple[str, str | None]:
    """``(store to open, trace to show or None)`` for ``file``; ``db`` receives imports.

    ``default_store``: ``db`` is the embedded default store (created first when missing).
    """
    from app.default_store import ensure_default_store
    from core.importers.api import import_counted
    from core.store import Store

    path = Path(file)
    if not path.is_file():
        raise InvalidInputError(f"{path}: no such file")
    if is_sqlite_file(path):
        return str(path), None
    if default_store:
        db = ensure_default_store(db)
    with Store.open(db) as store:
        results = import_counted(store, [path])
    if not results:
        raise InvalidInputError(f"{path}: no trace found in this file")
    return db, results[0].trace_id
