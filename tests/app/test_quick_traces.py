"""``ctxlens traces`` reads a current SQLite store with sqlite3 alone (no SQLAlchemy), and
falls back to the Store for anything else (older schema, URL, not a store)."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from app.cli import main
from core.records import NewMessage
from core.store import Store
from core.store.engine import HEAD_REVISION
from core.store.quick import head_revision, list_traces

ROOT = Path(__file__).resolve().parents[2]


def _store(db: Path) -> None:
    with Store.open(db) as s, s.write() as w:
        for title in ("first <b>", "second"):
            tr = w.create_trace(title, metadata={"k": 1})
            w.append(tr.id, [NewMessage("user", "hi"), NewMessage("assistant", "hello")])


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), out=out), out.getvalue()


def test_head_revision_read_from_the_migration_chain_is_the_engines() -> None:
    assert head_revision() == HEAD_REVISION


def test_quick_listing_equals_the_store_listing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    with Store.open(db) as s:
        full = [
            {"id": t.id, "title": t.title, "source": t.source, "created_at": t.created_at,
             "messages": t.messages, "head": t.head}
            for t in s.traces()
        ]  # fmt: skip
    assert list_traces(str(db)) == full
    code, text = _cli("--db", str(db), "traces", "--json")
    assert code == 0 and json.loads(text) == full


def test_other_revisions_and_non_stores_fall_back_to_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0004_pending_token_counts'")
    assert list_traces(str(db)) is None
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE x (a)")
    assert list_traces(str(other)) is None
    code, _ = _cli("--db", str(other), "traces", "--json")
    assert code == 2  # the Store names what is wrong
    assert list_traces(str(tmp_path / "missing.db")) is None
    assert _cli("--db", str(tmp_path / "missing.db"), "traces")[0] == 2
    assert list_traces("sqlite:///" + str(db)) is None


def test_traces_command_imports_no_sqlalchemy(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    probe = (
        "import sys, io; from app.cli import main; out = io.StringIO(); "
        f"code = main(['--db', {str(db)!r}, 'traces', '--json'], out=out); "
        "heavy = ('sqlalchemy', 'alembic', 'core.records', 'asyncio'); "
        "print(code, len(__import__('json').loads(out.getvalue())), "
        "sorted(m for m in heavy if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert proc.stdout.split() == ["0", "2", "[]"]
