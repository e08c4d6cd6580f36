"""Past revisions keep creating what they created (the frozen ``migrations/columns.py``).

``test_store_schema.py`` compares the migrated schema with today's ``schema.py``; this
compares every revision with what it created when it was written: the SQLite schema after
each revision (online) and each revision's PostgreSQL SQL (offline, no server). A change to
a shared migration helper that alters any past revision fails here. A new revision adds its
section: run with ``CTXLENS_WRITE_SCHEMA_HISTORY=1`` once and review the diff of the file.
"""

from __future__ import annotations

import io
import os
import sqlite3
from pathlib import Path

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import create_engine

from core.store.fulltext import FTS_TABLE
from core.store.migrate import script_directory, upgrade

HISTORY = Path(__file__).parents[1] / "fixtures" / "schema_history" / "ddl.txt"


def _sections(tmp: Path) -> dict[str, str]:
    revisions = list(reversed(list(script_directory().walk_revisions())))
    db = tmp / "history.db"
    engine = create_engine(f"sqlite:///{db}")
    out: dict[str, str] = {}
    for rev in revisions:
        upgrade(engine, rev.revision)
        con = sqlite3.connect(db)
        rows = con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY 1, 2")
        # FTS5's shadow tables are left out: SQLite writes their DDL, per SQLite version.
        kept = [r for r in rows if not r[1].startswith(f"{FTS_TABLE}_")]
        out[f"sqlite after {rev.revision}"] = "\n".join(repr(r) for r in kept)
        con.close()
        buf = io.StringIO()
        ctx = MigrationContext.configure(
            dialect_name="postgresql", opts={"as_sql": True, "output_buffer": buf}
        )
        with Operations.context(ctx):
            rev.module.upgrade()
        out[f"postgresql upgrade {rev.revision}"] = buf.getvalue().strip()
    engine.dispose()
    return out


def _read() -> dict[str, str]:
    text = HISTORY.read_text(encoding="utf-8")
    parts = text.split("\n## ")[1:]
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1].rstrip("\n") for p in parts}


def _write(sections: dict[str, str]) -> None:
    HISTORY.write_text("".join(f"\n## {k}\n{v}\n" for k, v in sections.items()), "utf-8")


def test_every_revision_creates_what_it_created_when_written(tmp_path: Path) -> None:
    now = _sections(tmp_path)
    if os.environ.get("CTXLENS_WRITE_SCHEMA_HISTORY") == "1":
        _write(now)
    recorded = _read()
    changed = [k for k in recorded if now.get(k) != recorded[k]]
    assert changed == [], f"past revisions now create something else: {changed}"
    new = [k for k in now if k not in recorded]
    assert new == [], f"record the new revision's sections (see the docstring): {new}"
