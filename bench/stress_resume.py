"""SIGKILL trials: the demo is killed at a random instant (from before its first checkpoint
to its last calls, inside subagents and compactions alike), resumed in a new process, and
must finish with no tool call redone. ``python -m bench.stress_resume [TRIALS] [SEED]``.

Each trial: ``ctxlens demo`` in a child, killed after a random number of model calls (0:
as soon as its trace exists); then ``ctxlens resume``. Figures: unresumable trials (resume
failed), trials with redone tool calls, and what was running at the kill (the latest
checkpoint's type; whether a subagent branch was open).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
#: Model calls of the whole demo (the kill point is drawn below it).
DEMO_CALLS = 127


def _ctxlens(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", "--db", str(db), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _state(db: Path) -> tuple[str | None, int, str, bool]:
    """(trace id, model calls, latest checkpoint type, a subagent message is the newest)."""
    from core.store import Store

    try:
        with Store.open(db) as store:
            traces = store.traces()
            if not traces:
                return None, 0, "", False
            tid = traces[0].id
            with store.read() as r:
                cps = r.checkpoints(tid)
                last = r.conn.exec_driver_sql(
                    "SELECT branch_type FROM messages WHERE trace_id = ? "
                    "ORDER BY sequence DESC LIMIT 1",
                    (tid,),
                ).first()
                return (
                    tid,
                    r.llm_call_count(tid),
                    cps[-1].type if cps else "none",
                    bool(last and last[0] == "subagent"),
                )
    except Exception:  # the child may be creating the schema right now
        return None, 0, "", False


def trial(folder: Path, kill_after: int) -> dict[str, object]:
    db = folder / "run.db"
    child = _ctxlens(db, "demo", "--json")
    state: tuple[str | None, int, str, bool] = (None, 0, "", False)
    try:
        while child.poll() is None:
            state = _state(db)
            if state[0] is not None and state[1] >= kill_after:
                break
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait(60)
    tid, calls, cp_type, in_subagent = _state(db)
    if tid is None:
        return {"outcome": "no trace yet"}
    proc = _ctxlens(db, "resume", tid, "--json")
    out, err = proc.communicate(timeout=600)
    row: dict[str, object] = {"calls": calls, "checkpoint": cp_type, "subagent": in_subagent}
    if proc.returncode != 0:
        return {**row, "outcome": "unresumable", "error": err.strip().splitlines()[-1:]}
    result = json.loads(out)
    redone = result.get("redone_tool_calls") or 0
    return {**row, "outcome": "redone" if redone else "ok", "redone": redone}


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    outcomes: Counter[str] = Counter()
    where: Counter[str] = Counter()
    started = time.perf_counter()
    for i in range(trials):
        with tempfile.TemporaryDirectory() as d:
            row = trial(Path(d), rng.choice((0, 1, rng.randrange(DEMO_CALLS))))
        outcomes[str(row["outcome"])] += 1
        where[f"{row.get('checkpoint')}{' in subagent' if row.get('subagent') else ''}"] += 1
        if row["outcome"] not in ("ok", "no trace yet"):
            print(f"trial {i}: {row}", flush=True)
    took = time.perf_counter() - started
    print(f"{trials} trials in {took:.0f} s: {dict(outcomes)}; killed at: {dict(where)}")
    for figure, value in (
        ("unresumable trials", outcomes["unresumable"]),
        ("trials with redone tool calls", outcomes["redone"]),
    ):
        row = {"bench": "stress_resume", "figure": figure, "value": value, "unit": "trials"}
        print(json.dumps({**row, "goal": 0}))


if __name__ == "__main__":
    main()
