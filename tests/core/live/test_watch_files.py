"""``ctxlens watch --once`` run again and again over files that change between runs (each
run is a restart): a partial line cut inside a UTF-8 character waits for its end, a Codex
rollout read in pieces equals a full import, a replaced, truncated or rotated file becomes
a new trace without touching the old one, and a bad line is reported and skipped."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from core.importers.api import import_paths
from core.store import Store
from tests.conftest import TRACES
from tests.core.live.watch_helpers import shape

Cli = Callable[..., tuple[int, str]]
CODEX = TRACES / "codex/codemie-ai__codemie-code/src/agents/plugins/codex/__tests__/fixtures"


def _user(i: int, text: str) -> bytes:
    rec = {
        "type": "user",
        "uuid": f"u{i}",
        "parentUuid": f"u{i - 1}" if i else None,
        "sessionId": "s1",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": text},
    }
    return (json.dumps(rec, ensure_ascii=False) + "\n").encode()


def _once(cli: Cli, db: Path, folder: Path) -> list[dict[str, object]]:
    code, out = cli("--db", str(db), "watch", str(folder), "--once", "--json")
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


def _contents(db: Path, trace_id: str) -> list[str]:
    with Store.open(db) as s, s.read() as r:
        return [m.content for m in r.all_messages(trace_id)]


def test_a_line_cut_inside_a_utf8_character_waits_for_its_end(cli: Cli, tmp_path: Path) -> None:
    db, folder = tmp_path / "s.db", tmp_path / "p"
    folder.mkdir()
    f = folder / "s1.jsonl"
    second = _user(1, "naïve café")
    cut = second.index("ï".encode()) + 1  # between the two bytes of ï
    f.write_bytes(_user(0, "first") + second[:cut])
    (event,) = _once(cli, db, folder)
    assert event["event"] == "trace" and event["messages"] == 1
    assert _once(cli, db, folder) == []  # still half a line: nothing new
    with f.open("ab") as out:
        out.write(second[cut:])
    (event,) = _once(cli, db, folder)
    assert event["event"] == "append" and event["messages"] == 1
    assert _contents(db, str(event["trace_id"])) == ["first", "naïve café"]


@pytest.mark.skipif(not CODEX.is_dir(), reason="shared/traces not present")
def test_a_codex_rollout_read_in_pieces_equals_a_full_import(cli: Cli, tmp_path: Path) -> None:
    (src,) = CODEX.glob("rollout-*.jsonl")
    lines = src.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "sessions" / "2026" / "05" / "11"
    folder.mkdir(parents=True)
    live = folder / src.name
    db = tmp_path / "live.db"
    # Cut where the agent really pauses: before a tool's output (the tool is running).
    outputs = [i for i, line in enumerate(lines) if b'"function_call_output"' in line]
    cuts = [0, *outputs[::5]]
    for start, end in zip(cuts, [*cuts[1:], len(lines)], strict=True):
        with live.open("ab") as out:
            out.write(b"".join(lines[start:end]))
        _once(cli, db, tmp_path / "sessions")
    assert len(cuts) > 3
    with Store.open(db) as s, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [live])
        (trace,) = s.traces()
        assert trace.source == "codex"
        assert list(shape(s, trace.id)) == list(shape(full, res.trace_id))


def test_replaced_truncated_and_rotated_files_become_new_traces(cli: Cli, tmp_path: Path) -> None:
    db, folder = tmp_path / "s.db", tmp_path / "p"
    folder.mkdir()
    f = folder / "s1.jsonl"
    f.write_bytes(_user(0, "one") + _user(1, "two"))
    (first,) = _once(cli, db, folder)

    f.write_bytes(_user(0, "ONE"))  # replaced by a shorter file (truncated)
    (second,) = _once(cli, db, folder)
    assert second["event"] == "trace" and second["trace_id"] != first["trace_id"]

    os.replace(f, folder / "s1.jsonl.1")  # rotated away; a new file takes the name
    f.write_bytes(_user(0, "ONE") + _user(1, "three"))
    (third,) = _once(cli, db, folder)
    assert third["event"] == "trace" and third["trace_id"] not in (
        first["trace_id"],
        second["trace_id"],
    )
    assert _contents(db, str(first["trace_id"])) == ["one", "two"]  # nothing stored is lost
    assert _contents(db, str(second["trace_id"])) == ["ONE"]
    assert _contents(db, str(third["trace_id"])) == ["ONE", "three"]


def test_a_bad_line_is_reported_by_file_and_line_and_skipped(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, folder = tmp_path / "s.db", tmp_path / "p"
    folder.mkdir()
    f = folder / "s1.jsonl"
    f.write_bytes(_user(0, "one") + b"{not json\n" + _user(2, "three"))
    (event,) = _once(cli, db, folder)
    assert f"{f}:2: invalid JSON" in capsys.readouterr().err
    assert _contents(db, str(event["trace_id"])) == ["one", "three"]
    with f.open("ab") as out:
        out.write(_user(3, "four"))
    (event,) = _once(cli, db, folder)  # the restart replays the bad line without a word
    assert "invalid JSON" not in capsys.readouterr().err
    assert _contents(db, str(event["trace_id"])) == ["one", "three", "four"]


def test_a_failed_batch_rolls_back_and_the_next_look_continues_the_same_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.errors import StoreOpenError
    from core.live import watch

    folder = tmp_path / "p"
    folder.mkdir()
    f = folder / "s1.jsonl"
    f.write_bytes(_user(0, "one"))
    with Store.open(tmp_path / "s.db") as store:
        w = watch.Watcher(store, [folder])
        (first,) = w.poll(drain=True)
        real = watch.record_batch

        def busy(*_a: object) -> None:
            raise StoreOpenError("database is locked")

        monkeypatch.setattr(watch, "record_batch", busy)
        with f.open("ab") as out:
            out.write(_user(1, "two"))
        assert w.poll(drain=True) == [] and "database is locked" in w.tally.last_error
        monkeypatch.setattr(watch, "record_batch", real)
        (again,) = w.poll(drain=True)
        assert again.trace_id == first.trace_id and not again.new_trace
        assert [t.id for t in store.traces()] == [first.trace_id]
    assert _contents(tmp_path / "s.db", first.trace_id) == ["one", "two"]
