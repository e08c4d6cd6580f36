"""Ctrl-C (or SIGTERM) during ``ctxlens import`` of a folder: the traces finished before it
are kept and listed, the file being read is rolled back whole, what the store held before
is untouched, and the command says so and exits 130 — not a traceback, not silence."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.conftest import TRACES
from tests.helpers.ctxlens_process import run, spawn

SESSION = (
    TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
    "/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared/traces not present")


def _folder(dest: Path, copies: int) -> Path:
    """``copies`` copies of a real session, each its own content (``i`` blank lines at its
    end, which the reader skips), so none is taken for a re-import of another."""
    body = SESSION.read_bytes()
    for i in range(copies):
        (dest / f"copy-{i:02d}").mkdir(parents=True)
        (dest / f"copy-{i:02d}" / SESSION.name).write_bytes(body + b"\n" * i)
    return dest


def _traces(db: Path) -> dict[str, int]:
    """Committed traces and their message counts, read as another process would."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        rows = c.execute(
            "select t.id, count(m.id) from traces t left join messages m on m.trace_id = t.id "
            "group by t.id"
        )
        return dict(rows.fetchall())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_folder_import_keeps_and_lists_what_it_finished(
    tmp_path: Path, sig: signal.Signals
) -> None:
    db = tmp_path / "store.db"
    first = run("--db", str(db), "import", str(SESSION), "--json")  # held before
    assert first.returncode == 0, first.stderr
    before = _traces(db)
    folder = _folder(tmp_path / "sessions", 40)
    proc = spawn("--db", str(db), "import", str(folder))
    deadline = time.monotonic() + 60
    while len(_traces(db)) < len(before) + 1:  # one trace of the folder is committed
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.005)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)

    assert proc.returncode == 130, err
    assert "Traceback" not in err
    after = _traces(db)
    new = {tid: n for tid, n in after.items() if tid not in before}
    assert 1 <= len(new) < 40, "the interrupt came before the folder was read"
    assert {tid: after[tid] for tid in before} == before  # nothing held before was touched
    listed = [line for line in out.splitlines() if " -> " in line]
    assert sorted(line.split(" -> ")[1].split()[0] for line in listed) == sorted(new)
    assert f"interrupted: {len(new)} trace(s) imported before it are kept" in err
    for line in listed:  # each kept trace is whole: the rows are the import's own count
        tid = line.split(" -> ")[1].split()[0]
        assert new[tid] == int(line.split("(")[1].split()[0]) > 100
