"""SIGKILL trials of a run: the demo is killed at a random instant (from before its first
checkpoint to its last calls, inside subagents and compactions alike), its store file is
copied alone (the store is one file, issue 18) and the copy is resumed in a new process.

``python -m bench.stress_resume [--trials N] [--seed S] [--out FILE]`` (``make stress``:
100 trials; ``--summarize FILE`` reports the trials an ``--out`` file holds). Each
trial: ``ctxlens demo`` in a child, killed after a random number of model calls (0: as
soon as its trace exists); ``PRAGMA integrity_check`` on the killed file; the
rows a reader saw committed before the kill counted again after it (rows lost); the file
copied without its WAL or anything beside it; ``ctxlens resume`` on the copy. Figures:
integrity failures, rows lost, resumes ok, unresumable trials, redone tool calls, and what
was running at the kill (the latest checkpoint's type; whether a subagent branch was open).
One JSON line per trial goes to ``--out`` as it ends, so a cut-short run keeps its trials.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.ctxlens_process import spawn  # noqa: E402

#: Model calls of the whole demo (the kill point is drawn below it).
DEMO_CALLS = 127
UNITS = {"rows lost": "rows", "redone tool calls": "calls"}
#: Figures whose goal is 0 (issue 18: 0 unresumable, 0 redone).
ZERO_GOALS = (
    "integrity failures",
    "rows lost",
    "unresumable trials",
    "trials with redone tool calls",
    "redone tool calls",
)


def _ctxlens(db: Path, *args: str) -> subprocess.Popen[str]:
    return spawn("--db", str(db), *args)


def _counts(db: Path) -> tuple[str | None, int, int]:
    """(trace id, model calls, messages) a reader sees committed now (sqlite3, read-only:
    a millisecond, so the poll keeps up with the run)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            row = con.execute("SELECT id FROM traces ORDER BY created_at LIMIT 1").fetchone()
            if row is None:
                return None, 0, 0
            tid = str(row[0])
            calls = con.execute("SELECT count(*) FROM llm_calls WHERE trace_id = ?", (tid,))
            messages = con.execute("SELECT count(*) FROM messages WHERE trace_id = ?", (tid,))
            return tid, int(calls.fetchone()[0]), int(messages.fetchone()[0])
    except sqlite3.Error:  # the child may be creating the schema right now
        return None, 0, 0


def _integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return ", ".join(str(r[0]) for r in con.execute("PRAGMA integrity_check"))


def _state(db: Path, tid: str) -> tuple[str, bool]:
    """(latest checkpoint type, a subagent message is the newest); opening and closing the
    store folds the killed run's WAL into the file, as any ctxlens command would."""
    from core.store import Store

    with Store.open(db) as store, store.read() as r:
        cps = r.checkpoints(tid)
        last = r.conn.exec_driver_sql(
            "SELECT branch_type FROM messages WHERE trace_id = ? ORDER BY sequence DESC LIMIT 1",
            (tid,),
        ).first()
        return (cps[-1].type if cps else "none"), bool(last and last[0] == "subagent")


def _kill_after(db: Path, kill_after: int) -> tuple[str | None, int, int]:
    """Run the demo into ``db``, SIGKILL it after ``kill_after`` calls; what was seen last."""
    child = _ctxlens(db, "demo", "--json")
    seen: tuple[str | None, int, int] = (None, 0, 0)
    try:
        while child.poll() is None:
            seen = _counts(db)
            if seen[0] is not None and seen[1] >= kill_after:
                break
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.communicate(timeout=60)
    return seen


def trial(folder: Path, kill_after: int) -> dict[str, Any]:
    db = folder / "run.db"
    tid, seen_calls, seen_messages = _kill_after(db, kill_after)
    if tid is None:
        return {"outcome": "no trace yet"}
    integrity = _integrity(db)
    _, calls, messages = _counts(db)
    checkpoint, in_subagent = _state(db, tid)
    copy = folder / "copy" / "run.db"
    copy.parent.mkdir()
    shutil.copy(db, copy)  # the file alone: no -wal, no folder beside it
    row: dict[str, Any] = {
        "kill_after": kill_after,
        "calls": calls,
        "checkpoint": checkpoint,
        "subagent": in_subagent,
        "integrity": integrity,
        "rows_lost": max(0, seen_calls - calls) + max(0, seen_messages - messages),
    }
    proc = _ctxlens(copy, "resume", tid, "--json")
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        return {**row, "outcome": "unresumable", "error": err.strip().splitlines()[-1:]}
    result = json.loads(out)
    redone = int(result.get("redone_tool_calls") or 0)
    done = result.get("stopped") == "done" or result.get("status") == "finished"
    outcome = "redone" if redone else "ok" if done else "not finished"
    return {**row, "outcome": outcome, "redone": redone, "after_resume": _integrity(copy)}


def summary(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The figures of a set of trials (``rows`` as ``trial`` returns them)."""
    outcomes = Counter(str(r["outcome"]) for r in rows)
    killed = [r for r in rows if r["outcome"] != "no trace yet"]
    return {
        "trials": len(rows),
        "integrity failures": sum(
            1 for r in killed if r["integrity"] != "ok" or r.get("after_resume", "ok") != "ok"
        ),
        "rows lost": sum(int(r["rows_lost"]) for r in killed),
        "resumes ok": outcomes["ok"],
        "unresumable trials": outcomes["unresumable"] + outcomes["not finished"],
        "trials with redone tool calls": outcomes["redone"],
        "redone tool calls": sum(int(r.get("redone", 0)) for r in killed),
        "killed before the trace existed": outcomes["no trace yet"],
    }


def run(trials: int, seed: int, out: Path | None = None) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for i in range(trials):
        with tempfile.TemporaryDirectory() as d:
            row = trial(Path(d), rng.choice((0, 1, rng.randrange(DEMO_CALLS))))
        rows.append(row)
        if out is not None:
            with out.open("a") as f:
                f.write(json.dumps({"trial": i, **row}) + "\n")
        if row["outcome"] not in ("ok", "no trace yet") or row.get("rows_lost"):
            print(f"trial {i}: {row}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.stress_resume", description=__doc__)
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, help="append one JSON line per trial here")
    p.add_argument("--summarize", type=Path, metavar="FILE", help="only report an --out file")
    a = p.parse_args(argv)
    started = time.perf_counter()
    if a.summarize is not None:
        rows = [json.loads(line) for line in a.summarize.read_text().splitlines() if line]
    else:
        rows = run(a.trials, a.seed, a.out)
    where = Counter(
        f"{r.get('checkpoint')}{' in subagent' if r.get('subagent') else ''}" for r in rows
    )
    took = time.perf_counter() - started
    print(f"{len(rows)} trials in {took:.0f} s; killed at: {dict(where)}")
    for figure, value in summary(rows).items():
        unit = UNITS.get(figure, "trials")
        row = {"bench": "stress_resume", "figure": figure, "value": value, "unit": unit}
        print(json.dumps({**row, "goal": 0} if figure in ZERO_GOALS else row), flush=True)


if __name__ == "__main__":
    main()
