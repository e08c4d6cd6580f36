"""Resuming a killed run in a new process (STORE-5, seed C): the child running the demo is
SIGKILLed mid-run, a new process resumes it from its checkpoint and finishes without
redoing a completed step; two racing resumers give exactly one conflict."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.errors import CheckpointConflict, ConflictError
from core.exporters.ctxlens_json import export_text
from core.replay.recording import call_key
from core.replay.resume import ResumeOptions, resume
from core.run.metrics import compute
from core.store import Store
from tests.helpers.ctxlens_process import child_env, spawn

ROOT = Path(__file__).resolve().parents[3]
KILL_AFTER = 45
"""Model calls before the kill: mid-run, before the verifier subagent (which a resume
would start over)."""


def ctxlens(db: Path, *args: str) -> subprocess.Popen[str]:
    return spawn("--db", str(db), *args)


def _calls(db: Path) -> tuple[str | None, int]:
    try:
        with Store.open(db) as store:
            traces = store.traces()
            if not traces:
                return None, 0
            with store.read() as r:
                return traces[0].id, r.llm_call_count(traces[0].id)
    except Exception:  # the child may be creating the schema right now
        return None, 0


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("killed")
    db = folder / "run.db"
    child = ctxlens(db, "demo", "--json")
    deadline = time.monotonic() + 120
    trace_id, calls = None, 0
    try:
        while calls < KILL_AFTER:
            assert child.poll() is None, "the demo ended before it could be killed"
            assert time.monotonic() < deadline, "the demo did not get going"
            time.sleep(0.02)
            trace_id, calls = _calls(db)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL and trace_id is not None
    return folder, trace_id


@pytest.fixture
def copy(killed: tuple[Path, str], tmp_path: Path) -> Iterator[tuple[Path, str]]:
    folder, trace_id = killed
    shutil.copy(folder / "run.db", tmp_path / "run.db")
    if (folder / "run.db-wal").exists():
        shutil.copy(folder / "run.db-wal", tmp_path / "run.db-wal")
    yield tmp_path / "run.db", trace_id


def _completed_repeats(store: Store, trace_id: str) -> list[str]:
    """Main-path tool calls repeating an earlier call that had a non-error result."""
    done: set[str] = set()
    repeats = []
    with store.read() as r:
        path = list(r.iter_main_path(trace_id))
        results = {m.tool_call_id: m for m in path if m.role == "tool"}
        for m in path:
            if m.role != "assistant" or m.kind != "message":
                continue
            for c in m.tool_calls:
                key = call_key(c)
                if key in done:
                    repeats.append(key)
                res = results.get(c.id)
                if res is not None and not res.content.startswith(("Error", "Blocked")):
                    done.add(key)
    return repeats


def _tool_calls(store: Store, trace_id: str) -> list[str]:
    with store.read() as r:
        return [
            call_key(c)
            for m in r.iter_main_path(trace_id)
            if m.role == "assistant" and m.kind == "message"
            for c in m.tool_calls
        ]


def test_a_killed_run_resumes_in_a_new_process_without_redoing_work(
    copy: tuple[Path, str], demo_store: tuple[Store, str]
) -> None:
    db, trace_id = copy
    with Store.open(db) as store, store.read() as r:
        before = r.llm_call_count(trace_id)
        latest = r.checkpoints(trace_id)[-1]
    assert before >= KILL_AFTER and latest.type in ("round", "compaction")
    proc = ctxlens(db, "resume", trace_id, "--json")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "resumed" and result["resumed_from"] == latest.generation
    assert result["final"] and result["stopped"] == "done"
    with Store.open(db) as store:
        metrics = compute(json.loads(export_text(store, trace_id)))
        assert metrics["redone_tool_calls"] == 0 == result["redone_tool_calls"]
        assert _completed_repeats(store, trace_id) == []
        whole, whole_id = demo_store
        assert _tool_calls(store, trace_id) == _tool_calls(whole, whole_id), (
            "the same steps as a run that was never killed"
        )
        with store.read() as r:
            notes = [m for m in r.iter_main_path(trace_id) if (m.metadata or {}).get("resume")]
            types = [c.type for c in r.checkpoints(trace_id)]
        assert len(notes) == 1 and "do not redo completed steps" in notes[0].content
        assert "resume" in types and types[-1] == "turn"


def test_two_racing_resumers_give_one_conflict_and_no_overwrite(copy: tuple[Path, str]) -> None:
    db, trace_id = copy
    with Store.open(db) as store, store.read() as r:
        generation = r.latest_generation(trace_id)
        messages = r.trace(trace_id).messages
    procs = [
        ctxlens(db, "resume", trace_id, "--checkpoint", str(generation), "--json") for _ in range(2)
    ]
    done = [(p.wait(300), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in done)
    assert codes == [0, 2], done
    (loser,) = [err for code, _, err in done if code == 2]
    assert "stale" in loser or "another writer" in loser
    with Store.open(db) as store, store.read() as r:
        cps = r.checkpoints(trace_id)
        claims = [c for c in cps if c.type == "resume"]
        assert len(claims) == 1 and claims[0].generation == generation + 1
        assert [c.generation for c in cps] == list(range(1, len(cps) + 1))
        path = list(r.iter_main_path(trace_id))
        finals = [
            m for m in path if m.role == "assistant" and m.kind == "message" and not m.tool_calls
        ]
        assert len(finals) == 1 and r.trace(trace_id).messages > messages
        notes = [m for m in r.all_messages(trace_id) if (m.metadata or {}).get("resume")]
        assert len(notes) == 1, "the loser wrote nothing"


def test_a_stale_or_claimed_checkpoint_is_refused_and_nothing_is_written(
    copy: tuple[Path, str],
) -> None:
    db, trace_id = copy
    with Store.open(db) as store:
        with store.read() as r:
            cps = r.checkpoints(trace_id)
            messages = r.trace(trace_id).messages
        with pytest.raises(CheckpointConflict, match="stale"):
            resume(store, trace_id, ResumeOptions(checkpoint=cps[-2].generation))
        with store.write() as w:  # another process claimed it a moment ago
            w.write_checkpoint(trace_id, cps[-1].generation, "resume", b"{}")
        with pytest.raises(ConflictError, match="being resumed"):
            resume(store, trace_id)
        with store.read() as r:
            assert len(r.checkpoints(trace_id)) == len(cps) + 1
            assert r.trace(trace_id).messages == messages


def test_a_finished_run_has_nothing_to_resume(demo_store: tuple[Store, str]) -> None:
    store, trace_id = demo_store
    with store.read() as r:
        count = len(r.checkpoints(trace_id))
    result = resume(store, trace_id)
    assert result.status == "finished" and result.generation is None and result.final
    with store.read() as r:
        assert len(r.checkpoints(trace_id)) == count


def test_a_run_killed_before_its_first_round_resumes(
    tmp_path: Path, demo_store: tuple[Store, str]
) -> None:
    """Issue 18: a run killed after its turn opened but before the first round checkpoint
    had nothing to resume from; the turn's start is a checkpoint now."""
    import asyncio

    from core.demo.options import DemoOptions
    from core.demo.scenario import TASK, create_demo_trace, open_demo_run

    with Store.open(tmp_path / "early.db") as store:
        trace_id = create_demo_trace(store, DemoOptions())

        async def killed_at_once() -> None:
            async with open_demo_run(store, trace_id) as runner:
                await runner.start_turn(TASK)  # the process dies here

        asyncio.run(killed_at_once())
        with store.read() as r:
            assert [c.type for c in r.checkpoints(trace_id)] == ["start"]
            assert r.llm_call_count(trace_id) == 0
        result = resume(store, trace_id)
        assert result.status == "resumed" and result.checkpoint_type == "start"
        assert result.final and result.stopped == "done"
        assert (result.metrics or {})["redone_tool_calls"] == 0
        whole, whole_id = demo_store
        assert _tool_calls(store, trace_id) == _tool_calls(whole, whole_id)


def inside_a_subagent(db: Path) -> bool:
    """Two tool results on a subagent branch, and the subagent not done (its branch holds
    the trace's newest message): the point ``crash_at`` kills the demo at."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        row = con.execute("SELECT id FROM traces ORDER BY created_at LIMIT 1").fetchone()
        if row is None:
            return False
        rows = con.execute(
            "SELECT branch_type, role FROM messages WHERE trace_id = ? "
            "ORDER BY sequence DESC LIMIT 40",
            (row[0],),
        ).fetchall()
    if not rows or rows[0][0] != "subagent":
        return False
    return sum(1 for b, role in rows if b == "subagent" and role == "tool") >= 2


def test_a_run_killed_inside_a_subagent_resumes_inside_it(
    tmp_path: Path, demo_store: tuple[Store, str]
) -> None:
    """Issue 18: resume restarted a subagent killed mid-way and repeated its completed tool
    calls; it continues the subagent's own branch now (0 redone). The demo SIGKILLs itself
    right after the write that put it inside its subagent (``tests/helpers/crash_at.py``):
    killed from outside by a poller, it finished the subagent between two polls on a fast
    machine and never got scheduled inside it on a loaded one."""
    db = tmp_path / "run.db"
    child = subprocess.run(
        [
            sys.executable, "-m", "tests.helpers.crash_at",
            f"{__name__}:inside_a_subagent", "--db", str(db), "demo", "--json",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=child_env(), check=False,
    )  # fmt: skip
    assert child.returncode == -signal.SIGKILL, (child.returncode, child.stderr[-2000:])
    assert inside_a_subagent(db)
    with Store.open(db) as store:
        trace_id = store.traces()[0].id
    proc = ctxlens(db, "resume", trace_id, "--json")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["final"] and result["redone_tool_calls"] == 0, result
    with Store.open(db) as store:
        whole, whole_id = demo_store
        assert _tool_calls(store, trace_id) == _tool_calls(whole, whole_id)
        with store.read() as r:
            branches = r.conn.exec_driver_sql(
                "SELECT count(DISTINCT branch_id) FROM messages "
                "WHERE trace_id = ? AND branch_type = 'subagent'",
                (trace_id,),
            ).scalar_one()
        assert branches == 1, "the subagent went on on its own branch, not a second one"


def test_a_demo_killed_before_its_first_message_resumes_from_the_start(
    tmp_path: Path, demo_store: tuple[Store, str]
) -> None:
    """No checkpoint and no message (killed right after creating its trace): resume reads
    the log, finds nothing done, and runs the demo's turn from the start."""
    from core.demo.options import DemoOptions
    from core.demo.scenario import create_demo_trace

    with Store.open(tmp_path / "bare.db") as store:
        trace_id = create_demo_trace(store, DemoOptions())
        result = resume(store, trace_id)
        assert (result.status, result.checkpoint_type, result.resumed_from) == ("resumed", "log", 0)
        assert result.final and (result.metrics or {})["redone_tool_calls"] == 0
        whole, whole_id = demo_store
        assert _tool_calls(store, trace_id) == _tool_calls(whole, whole_id)


def _wait_for_calls(db: Path, child: subprocess.Popen[str], calls: int) -> str:
    """Poll (sqlite3, read-only) until the child's trace has ``calls`` model calls."""
    deadline = time.monotonic() + 300
    while True:
        assert child.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.02)
        try:
            with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
                row = con.execute(
                    "SELECT trace_id, count(*) FROM llm_calls GROUP BY trace_id"
                ).fetchone()
        except sqlite3.Error:  # the child may be creating the schema right now
            continue
        if row is not None and row[1] >= calls:
            return str(row[0])


def test_a_killed_ctxlens_run_resumes_from_a_copy_of_the_store_file_alone(
    tmp_path: Path,
) -> None:
    """Issue 18, one-file store: ``ctxlens run`` SIGKILLed mid-run; the store file is copied
    (nothing beside it: checkpoint blobs live inside) and the copy resumes to the end."""
    from core.demo.scenario import TASK, make_model
    from core.demo.world import World
    from core.llm import ModelServer

    killed = tmp_path / "killed" / "run.db"
    killed.parent.mkdir()
    with ModelServer(make_model(World())) as server:
        child = ctxlens(
            killed, "run", "--base-url", server.url, "--model", "scripted", "--task", TASK,
            "--demo-tools", "--max-steps", "200", "--json",
        )  # fmt: skip
        try:
            trace_id = _wait_for_calls(killed, child, 30)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(30)
    assert child.returncode == -signal.SIGKILL
    Store.open(killed).close()  # any ctxlens command folds the WAL into the file
    assert sorted(p.name for p in killed.parent.iterdir()) == ["run.db"], "one file"
    copied = tmp_path / "elsewhere" / "run.db"
    copied.parent.mkdir()
    shutil.copy(killed, copied)
    with Store.open(copied) as store, store.read() as r:
        latest = r.checkpoints(trace_id)[-1]
        assert store.read_checkpoint(latest)  # the blob came with the file
    with ModelServer(make_model(World())) as healthy:
        proc = ctxlens(copied, "resume", trace_id, "--base-url", healthy.url, "--json")
        out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["status"] == "resumed" and result["resumed_from"] == latest.generation
    assert result["final"].startswith("Top 10") and result["redone_tool_calls"] == 0
