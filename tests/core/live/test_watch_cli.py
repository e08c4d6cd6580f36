"""``ctxlens watch`` as a real process following a Claude Code session that a test thread
writes turn by turn: stopped halfway and started again, it ends with exactly the trace a
full import of the finished files gives (no duplicates, nothing lost, compaction and
subagents included)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from core.importers.api import import_paths
from core.store import Store
from tests.conftest import TRACES
from tests.core.live.watch_helpers import (
    Cli,
    imported_up_to,
    shape,
    turns,
    wait_for,
    write_turn,
)

SESSION = TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
SID = "258c7280-ae70-4798-800f-63464d01a85d"
pytestmark = pytest.mark.skipif(not SESSION.is_dir(), reason="shared/traces not present")


def _write(path: Path, parts: list[list[bytes]]) -> threading.Thread:
    def go() -> None:
        for turn in parts:
            write_turn(path, turn)

    t = threading.Thread(target=go)
    t.start()
    return t


def test_watch_survives_a_restart_and_matches_a_full_import(tmp_path: Path) -> None:
    src = SESSION / f"{SID}.jsonl"
    all_turns = turns(src.read_bytes().splitlines(keepends=True))
    half = len(all_turns) // 2
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    live_file = folder / src.name
    live_file.touch()
    db = tmp_path / "live.db"
    args = ("--db", str(db), "watch", str(tmp_path / "projects"), "--json", "--interval", "0.02")

    first = Cli(*args)
    _write(live_file, all_turns[:half]).join()
    size = live_file.stat().st_size
    wait_for(lambda: bool(first.lines) and imported_up_to(db, live_file) == size)
    assert "Traceback" not in first.stop()
    assert first.lines and first.lines[0]["event"] == "trace"

    second = Cli(*args)
    writer = _write(live_file, all_turns[half:])
    writer.join()
    shutil.copytree(SESSION / SID, folder / SID)  # the subagent files, written at the end
    size = live_file.stat().st_size
    agents = sorted((folder / SID / "subagents").glob("agent-*.jsonl"))
    wait_for(lambda: imported_up_to(db, live_file) == size)
    wait_for(lambda: all(imported_up_to(db, a) == a.stat().st_size for a in agents))
    assert "Traceback" not in second.stop()
    assert {line["event"] for line in second.lines} == {"append"}

    full_db = tmp_path / "full.db"
    with Store.open(full_db) as full, Store.open(db) as live:
        (res,) = import_paths(full, [folder])
        (trace,) = live.traces()
        assert trace.id == first.lines[0]["trace_id"]
        assert list(shape(live, trace.id)) == list(shape(full, res.trace_id))
        with live.read() as r, full.read() as f:
            assert len(r.compactions(trace.id)) == len(f.compactions(res.trace_id)) == 1


def test_watch_once_reads_a_folder_and_rejects_a_missing_one(cli, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    shutil.copytree(SESSION, tmp_path / "p")
    code, out = cli("--db", db, "watch", str(tmp_path / "p"), "--once", "--json")
    assert code == 0
    events = [__import__("json").loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["trace", "append", "append"]
    assert sum(e["messages"] for e in events) > 500
    code, out = cli("--db", db, "watch", str(tmp_path / "p"), "--once", "--json")
    assert code == 0 and out == ""  # nothing new: no duplicates
    assert cli("--db", db, "watch", str(tmp_path / "nowhere"), "--once")[0] == 2


def test_a_watch_fills_the_counts_an_interrupted_one_left(cli, tmp_path: Path) -> None:
    """Live review: a watch stopped (Ctrl-C) after writing a session's first batch and
    before filling in its token counts left them pending for good: `traces` read 0 tokens,
    and the next watch did not count them. The next watch counts them: the trace's totals
    equal a full import's."""
    import json

    from core.importers.counting import pending
    from core.live.watch import Watcher

    folder = tmp_path / "projects"
    folder.mkdir()
    shutil.copy(SESSION / f"{SID}.jsonl", folder)
    db = tmp_path / "live.db"
    with Store.open(db) as store:
        first = Watcher(store, [folder])
        first.poll()  # sees the file grow
        assert first.poll(), "the second look writes it"  # and stops before counting
        (trace,) = store.traces()
        assert pending(store, trace.id) > 0
    code, _out = cli("--db", str(db), "watch", str(folder), "--once")
    assert code == 0
    with Store.open(db) as store:
        assert pending(store, trace.id) == 0
    full = tmp_path / "full.db"
    assert cli("--db", str(full), "import", str(folder / f"{SID}.jsonl"))[0] == 0
    (live_row,) = json.loads(cli("--db", str(db), "traces", "--json")[1])
    (full_row,) = json.loads(cli("--db", str(full), "traces", "--json")[1])
    assert live_row["tokens"] == full_row["tokens"] > 0
