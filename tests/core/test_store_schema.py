"""STORE-8: migrations and the fresh-database path give the same schema as schema.py."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine

from core.store import Store
from core.store.engine import HEAD_REVISION
from core.store.migrate import known_revisions, upgrade
from core.store.schema import metadata
from tests.helpers.schema import declared_elsewhere


def _schema(db: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute(
            "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    return rows


def test_migrations_match_metadata(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    upgrade(engine)
    with engine.connect() as conn:
        # The FTS5 table and its shadow tables are declared as DDL, not SQLAlchemy tables.
        ctx = MigrationContext.configure(
            conn, opts={"include_name": lambda name, _kind, _p: not declared_elsewhere(name)}
        )
        diff = compare_metadata(ctx, metadata)
    assert diff == []


def test_fresh_path_equals_migrated_path(tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    upgrade(create_engine(f"sqlite:///{migrated}"))
    fresh = tmp_path / "fresh.db"
    Store.open(fresh).close()
    assert _schema(fresh) == _schema(migrated)
    con = sqlite3.connect(fresh)
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD_REVISION
    con.close()


def test_head_revision_constant_is_the_newest_migration() -> None:
    assert HEAD_REVISION in known_revisions()


def test_old_store_is_upgraded_on_open(tmp_path: Path) -> None:
    """A store stamped at the base revision (no tables) is migrated to head on open."""
    db = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{db}")
    upgrade(engine, "0001_initial")
    Store.open(db).close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT version_num FROM alembic_version").fetchone()[0] == HEAD_REVISION
    con.close()


def _header_application_id(db: Path) -> bytes:
    """Bytes 68..72 of the SQLite header, read as a file manager's magic sniffing does."""
    with db.open("rb") as f:
        head = f.read(72)
    assert head[:16] == b"SQLite format 3\x00"
    return head[68:72]


def test_new_and_upgraded_stores_carry_the_ctxlens_application_id(tmp_path: Path) -> None:
    """The desktop MIME type matches b"CTXL" at offset 68 (packaging/deb/ctxlens-mime.xml)."""
    fresh = tmp_path / "fresh.db"
    Store.open(fresh).close()
    assert _header_application_id(fresh) == b"CTXL"
    old = tmp_path / "old.db"
    upgrade(create_engine(f"sqlite:///{old}"), "0001_initial")
    assert _header_application_id(old) == b"\x00\x00\x00\x00"
    Store.open(old).close()
    assert _header_application_id(old) == b"CTXL"


def test_the_message_records_carry_the_table_columns() -> None:
    """Issue 19: a message's fields are the ``messages`` columns; rows, the export and the
    triggers derive from them (``core/store/message_fields.py``), and the records must
    name the same fields."""
    from dataclasses import fields

    from core.records import Message, NewMessage
    from core.store.message_fields import COLUMNS, EXPORT_FIELDS, FIELDS, JSON_COLUMNS

    assert {f.name for f in fields(Message)} == set(COLUMNS)
    assert {f.name for f in fields(NewMessage)} == set(FIELDS)
    assert set(JSON_COLUMNS) == {"parts", "tool_calls", "usage", "metadata"}
    assert set(EXPORT_FIELDS) == set(COLUMNS) - {"trace_id", "line", "depth"}


def test_the_tool_call_index_is_partial_on_both_databases_without_importing_postgresql() -> None:
    """The schema names no PostgreSQL option (its dialect would load on every start of a
    SQLite store, issue 20); a PostgreSQL store still gets the partial index on create."""
    probe = (
        "import sys, core.store.schema as t\n"
        "assert 'sqlalchemy.dialects.postgresql' not in sys.modules\n"
        "from sqlalchemy import create_mock_engine\n"
        "for url in ('postgresql+psycopg://', 'sqlite://'):\n"
        "    out = []\n"
        "    ddl = lambda sql, *a, **k: out.append(str(sql.compile(dialect=e.dialect)))\n"
        "    e = create_mock_engine(url, ddl)\n"
        "    t.metadata.create_all(e, checkfirst=False)\n"
        "    made = [s.strip() for s in out if 'INDEX ix_messages_tool_call_id' in s]\n"
        "    assert made == ['CREATE INDEX ix_messages_tool_call_id ON messages "
        "(trace_id, tool_call_id) WHERE tool_call_id IS NOT NULL'], (url, made)\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr
