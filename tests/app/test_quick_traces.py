"""``ctxlens traces`` reads a current SQLite store with sqlite3 alone (no SQLAlchemy), and
falls back to the Store for anything else (older schema, URL, not a store)."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from core.inspector.trace_list import assemble, summaries
from core.records import NewMessage
from core.store import Store
from core.store.engine import HEAD_REVISION
from core.store.quick import figures_and_calls, head_revision

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


def _list_traces(db: str) -> list[dict[str, object]] | None:
    found = figures_and_calls(db)
    return None if found is None else [s.to_json() for s in assemble(*found[0])]


def test_quick_listing_equals_the_store_listing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    with Store.open(db) as s, s.read() as r:
        full = [row.to_json() for row in summaries(r)]
    assert [(f["id"], f["title"], f["messages"]) for f in full] == [
        (t.id, t.title, t.messages) for t in Store.open(db).traces()
    ]
    assert _list_traces(str(db)) == full
    code, text = _cli("--db", str(db), "traces", "--json")
    listed = json.loads(text)
    assert code == 0 and [{k: v for k, v in t.items() if k != "cost"} for t in listed] == full


def test_other_revisions_and_non_stores_fall_back_to_the_store(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0004_pending_token_counts'")
    assert _list_traces(str(db)) is None
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE x (a)")
    assert _list_traces(str(other)) is None
    code, _ = _cli("--db", str(other), "traces", "--json")
    assert code == 2  # the Store names what is wrong
    assert _list_traces(str(tmp_path / "missing.db")) is None
    assert _cli("--db", str(tmp_path / "missing.db"), "traces")[0] == 2
    assert _list_traces("sqlite:///" + str(db)) is None


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


def _modules_after(args: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` a fresh process has imported after ``main(args)`` (any exit)."""
    probe = (
        "import sys, io; from app.cli import main; "
        f"main({args!r}, out=io.StringIO()); "
        f"print(sorted(m for m in {names!r} if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return proc.stdout.split()


def test_traces_starts_without_the_rerunners_other_commands_register_them(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    _store(db)
    names = ("core.demo", "core.delegation.rerun")
    assert _modules_after(["--db", str(db), "traces", "--json"], names) == ["[]"]
    # a command that runs traces again still finds the demo's re-runners registered
    # before its handler runs (this one then fails on the unknown trace: exit 2)
    registered = _modules_after(["--db", str(db), "replay", "no-such-trace"], names)
    assert registered == ["['core.delegation.rerun',", "'core.demo']"]


def test_the_quick_listings_costs_equal_the_stores(tmp_path: Path) -> None:
    """The calls ``figures_and_calls`` reads in the same pass as the figures price every
    trace as the Store's path does (``core/cost/totals.py:trace_totals``)."""
    from core.cost.compute import CostSummary
    from core.cost.table import load_table
    from core.cost.totals import trace_totals
    from core.importers.api import import_paths
    from core.store.quick import figures_and_calls
    from tests.conftest import TRACES

    sessions = sorted((TRACES / "claude_code").rglob("*.jsonl"))[:3]
    if not sessions:
        pytest.skip("no shared traces")
    db = tmp_path / "s.db"
    _store(db)
    with Store.open(db) as store:
        import_paths(store, sessions)
    code, text = _cli("--db", str(db), "traces", "--json")
    assert code == 0
    listed = {t["id"]: t["cost"] for t in json.loads(text)}
    table = load_table()
    with Store.open(db) as store:
        costs = trace_totals(store, table)[0]
    assert any(c["priced_calls"] for c in listed.values()), "the sessions have priced calls"
    none = CostSummary(table.table_date).to_json()  # a trace without calls
    want = {tid: costs[tid].to_json() if tid in costs else none for tid in listed}
    assert {
        tid: {k: v for k, v in c.items() if k != "recorded"} for tid, c in listed.items()
    } == want
    assert figures_and_calls(str(tmp_path / "missing.db")) is None
