"""``ctxlens copy``: a trace moves file → team store (PostgreSQL + S3) → file losslessly;
re-running is a no-op; an interrupted copy leaves nothing partial and re-running finishes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from core.errors import InvalidInputError
from core.exporters.ctxlens_json import export_text
from core.records import NewMessage
from core.store import Store
from core.store.blobs import DatabaseBlobs
from core.transfer import copy_traces
from tests.helpers.demo_trace import build

ROOT = Path(__file__).resolve().parents[2]
Cli = Callable[..., tuple[int, str]]


def _export(db: str, trace_id: str, objects: str | None = None) -> str:
    with Store.open(db, objects=objects) as s:
        return export_text(s, trace_id)


def _ids(db: str) -> list[str]:
    with Store.open(db) as s:
        return [t.id for t in s.traces()]


def test_demo_trace_both_ways_losslessly(
    cli: Cli, tmp_path: Path, pg_url: str, s3_url: str
) -> None:
    local = tmp_path / "mine.db"
    with Store.open(local) as s:
        tid = build(s)
        original = export_text(s, tid)
    code, out = cli("copy", "--from", str(local), "--to", pg_url, "--to-objects", s3_url, "--json")
    assert code == 0
    assert json.loads(out) == [
        {"trace_id": tid, "title": "demo", "status": "copied", "messages": 18, "detail": ""}
    ]
    assert _export(pg_url, tid, s3_url) == original  # blobs included, hash-checked on read

    back = tmp_path / "back.db"
    code, out = cli("copy", "--from", pg_url, "--from-objects", s3_url, "--to", str(back))
    assert code == 0 and f"{tid}  copied" in out
    assert _export(str(back), tid) == original
    assert not (tmp_path / "back.db.objects").exists()  # the file keeps its blobs inside
    with Store.open(back) as s:
        assert isinstance(s.objects, DatabaseBlobs)

    # the CLI reads the team store by URL like any other store
    code, out = cli("--db", pg_url, "traces", "--json")
    assert [t["id"] for t in json.loads(out)] == [tid]


def test_rerun_skips_and_a_different_trace_is_a_conflict(
    cli: Cli, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    local = tmp_path / "mine.db"
    with Store.open(local) as s:
        first, second = build(s, "one"), build(s, "two")
    objs = str(tmp_path / "team-objects")
    assert cli("copy", "--from", str(local), "--to", pg_url, "--to-objects", objs)[0] == 0
    code, out = cli("copy", "--from", str(local), "--to", pg_url, "--to-objects", objs, "--json")
    assert code == 0
    assert [r["status"] for r in json.loads(out)] == ["skipped", "skipped"]

    with Store.open(local) as s:  # the local trace grows after it was shared
        s.append(first, [NewMessage("user", "one more")])
    before = _export(pg_url, first, objs)
    code, out = cli(
        "copy", "--from", str(local), "--to", pg_url, "--to-objects", objs, first, second
    )
    assert code == 2
    assert "conflict" in out and "(18 messages there, 19 here)" in out
    assert f"differ at the destination and were left unchanged: {first}" in capsys.readouterr().err
    assert _export(pg_url, first, objs) == before


def test_interrupted_copy_leaves_nothing_and_rerun_finishes(tmp_path: Path, pg_url: str) -> None:
    objs = str(tmp_path / "team-objects")
    with Store.open(tmp_path / "mine.db") as src, Store.open(pg_url, objects=objs) as dst:
        small = build(src, "small")
        big = build(src, "big", messages=2500)
        seen: list[int] = []

        def interrupt(trace_id: str, n: int) -> None:
            seen.append(n)
            if trace_id == big and n >= 2000:
                raise KeyboardInterrupt  # the user presses Ctrl-C mid-trace

        with pytest.raises(KeyboardInterrupt):
            copy_traces(src, dst, progress=interrupt)
        assert [t.id for t in dst.traces()] == [small]  # the big one left no trace at all
        with dst.read() as r:
            assert list(r.all_messages(big)) == []
        results = copy_traces(src, dst)
        assert [(r.trace_id, r.status) for r in results] == [(small, "skipped"), (big, "copied")]
        assert export_text(dst, big) == export_text(src, big)


def test_killed_copy_process_leaves_nothing(tmp_path: Path, pg_url: str) -> None:
    local = tmp_path / "mine.db"
    with Store.open(local) as s:
        big = build(s, "big", messages=6_000)
    objs = str(tmp_path / "team-objects")
    argv = [sys.executable, "-m", "app", "copy", "--from", str(local), "--to", pg_url]
    proc = subprocess.Popen(
        [*argv, "--to-objects", objs], cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + 60
    while b"messages" not in seen:  # the copy is streaming messages into its transaction
        assert time.monotonic() < deadline and proc.poll() is None, seen
        seen += os.read(proc.stderr.fileno(), 256)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # all or nothing: the trace is absent (killed mid-transaction, the usual case) or
    # complete (the kill landed after COMMIT); never a part of it
    if _ids(pg_url):
        assert _export(pg_url, big, objs) == _export(str(local), big)
    code = subprocess.run([*argv, "--to-objects", objs, "--quiet"], cwd=ROOT, check=False)
    assert code.returncode == 0
    assert _export(pg_url, big, objs) == _export(str(local), big)


def test_copy_refuses_what_it_cannot_do(cli: Cli, tmp_path: Path, pg_url: str) -> None:
    local = tmp_path / "mine.db"
    with Store.open(local) as s:
        build(s)
    code, _ = cli("copy", "--from", str(tmp_path / "missing.db"), "--to", pg_url)
    assert code == 2
    with Store.open(local) as s, pytest.raises(InvalidInputError, match="same store"):
        copy_traces(s, s)
    # a server store without a configured bucket keeps checkpoint blobs in the database
    with Store.open(local) as s, Store.open(pg_url) as team:
        assert isinstance(team.objects, DatabaseBlobs)
        (tid,) = [t.id for t in s.traces()]
        assert [r.status for r in copy_traces(s, team)] == ["copied"]
        assert export_text(team, tid) == export_text(s, tid)
