"""Store benchmarks (issue 2): append, paging the main path of a huge trace, peak RSS,
token accounting per step (cached vs full recount).

Append is measured in turns: each round inserts the same pre-built rows into a fresh file
by the raw ``executemany`` baseline and by ``Writer.append``, the order flipped every round
(raw, ours; ours, raw; …), and the figures are the medians of each side. One pass of each
was at the mercy of whatever else the machine ran in those seconds: the baseline alone swung
its ratio from 0.30–0.34 (``python -m bench store``) to 0.17 (the whole bench).
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import figure
from bench.synth import cached_store, synthetic_messages

ROOT = Path(__file__).resolve().parents[1]


def _raw_sqlite_insert(path: Path, n: int, msgs: list[Any] | None = None) -> tuple[float, float]:
    """Baseline: the same rows through plain sqlite3 executemany, WAL, one table, no index."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute(
        "CREATE TABLE m (trace TEXT, seq INT, parent INT, role TEXT, content TEXT, "
        "tool_calls TEXT, token_count INT)"
    )
    msgs = synthetic_messages(0, n) if msgs is None else msgs
    t0, c0 = time.perf_counter(), time.process_time()
    for start in range(0, n, 5000):
        con.execute("BEGIN")
        con.executemany(
            "INSERT INTO m VALUES (?,?,?,?,?,?,?)",
            [
                (
                    "t",
                    start + i,
                    start + i - 1,
                    m.role,
                    m.content,
                    json.dumps([c.to_json() for c in m.tool_calls]),
                    m.token_count,
                )
                for i, m in enumerate(msgs[start : start + 5000])
            ],
        )
        con.execute("COMMIT")
    elapsed = time.perf_counter() - t0, time.process_time() - c0
    con.close()
    return elapsed


def _store_insert(path: Path, n: int, msgs: list[Any] | None = None) -> tuple[float, float]:
    """The same rows through Writer.append, 5,000 per transaction (messages pre-built):
    (wall, CPU) seconds, as ``_raw_sqlite_insert``."""
    from core.store import Store

    msgs = synthetic_messages(0, n) if msgs is None else msgs
    with Store.open(path) as store:
        trace_id = store.create_trace("bench").id
        t0, c0 = time.perf_counter(), time.process_time()
        for start in range(0, n, 5000):
            with store.write() as w:
                w.append(trace_id, msgs[start : start + 5000])
        return time.perf_counter() - t0, time.process_time() - c0


def _append_in_turns(n: int, rounds: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """Medians of (wall, CPU) for ours and the raw baseline, timed in turns: each round a
    fresh file per side, the order flipped every round so neither always runs first."""
    msgs = synthetic_messages(0, n)
    runs: dict[str, list[tuple[float, float]]] = {"raw": [], "ours": []}
    sides = {"raw": _raw_sqlite_insert, "ours": _store_insert}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for side in ("raw", "ours") if r % 2 == 0 else ("ours", "raw"):
                path = Path(tmp) / f"{side}-{r}.db"
                runs[side].append(sides[side](path, n, msgs))
                for leftover in Path(tmp).glob(f"{side}-{r}.db*"):
                    leftover.unlink()

    def median(side: str) -> tuple[float, float]:
        return (
            statistics.median(w for w, _ in runs[side]),
            statistics.median(c for _, c in runs[side]),
        )

    return median("ours"), median("raw")


WALK = """
import resource, sys, time
from core.store import Store
db, trace_id, mode = sys.argv[1], sys.argv[2], sys.argv[3]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
store = Store.open(db)
t0 = time.perf_counter()
n = 0
if mode == "walk":
    with store.read() as r:
        for m in r.iter_main_path(trace_id, page=2000):
            n += 1
elif mode == "pages":
    with store.read() as r:
        segs = r.segments(trace_id)
        total = sum(len(s) for s in segs)
        for offset in (0, total // 2, total - 200):
            for _ in range(50):
                n += len(r.main_path_page(trace_id, offset, 200, segments=segs))
t = time.perf_counter() - t0
print(n, t, base, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _walk(db: Path, trace_id: str, mode: str) -> tuple[int, float, int, int]:
    res = subprocess.run(
        [sys.executable, "-c", WALK, str(db), trace_id, mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    n, t, base, peak = res.stdout.split()
    return int(n), float(t), int(base), int(peak)


def _tokens(quick: bool, history_tokens: int) -> Iterator[dict[str, Any]]:
    """Per-step token accounting at a ~200k-token history: stored counts vs recount."""
    from core.tokens import TokenCounter

    counter = TokenCounter()
    history: list[str] = []
    counts: list[int] = []
    i = 0
    while sum(counts) < history_tokens:
        text = f"Step {i}: shard {i % 97} had {i * 7 % 1000} events; window win-{i}. " * 8
        history.append(text)
        counts.append(counter.count_text(text) + 3)
        i += 1
    steps = 5 if quick else 20
    t0 = time.perf_counter()
    for _ in range(steps):  # full recount: encode every message again
        total = sum(counter.count_uncached(t) + 3 for t in history)
    full = (time.perf_counter() - t0) / steps
    running = sum(counts)
    t0 = time.perf_counter()
    for s in range(steps * 50):  # cached: only the new message is counted
        new = f"new message {s} with some text " * 8
        running += counter.count_text(new) + 3
    cached = (time.perf_counter() - t0) / (steps * 50)
    base = "informational (the baseline: what cached counting saves)"
    yield figure("tokens", "full_recount_per_step", full * 1000, "ms", base)
    yield figure("tokens", "cached_per_step", cached * 1000, "ms", "<= 1 ms", baseline=full * 1000)
    yield figure("tokens", "speedup_cached_vs_full", full / cached, "x", ">= 50 x")
    _ = total


def run(quick: bool = False, smoke: bool = False) -> Iterator[dict[str, Any]]:
    n_append = 2_000 if smoke else 10_000 if quick else 100_000
    rounds = 1 if smoke else 3 if quick else 5
    ours, raw = _append_in_turns(n_append, rounds)
    wall = "informational (wall time: on a shared disk the WAL's writes swing it; CPU is judged)"
    yield {
        **figure(
            "store",
            "append_msgs_per_s",
            n_append / ours[0],
            "msg/s",
            wall,
            baseline=n_append / raw[0],
        ),
        "rounds": rounds,
    }
    goal = "ratio >= 0.2 (Writer.append vs raw sqlite3 executemany of the same rows, CPU)"
    yield {
        **figure(
            "store",
            "append_cpu_msgs_per_s",
            n_append / ours[1],
            "msg/s of CPU",
            goal,
            baseline=n_append / raw[1],
        ),
        "rounds": rounds,
    }
    big = 20_000 if smoke else 100_000 if quick else 1_000_000
    small = 2_000 if smoke else 10_000
    db_big, tid_big = cached_store(big)
    db_small, tid_small = cached_store(small)
    n, t, base, peak = _walk(db_big, tid_big, "walk")
    assert n == big
    walk = f"walk the main path of a {big:,}-message trace page by page without loading it"
    speed = f"informational ({walk}: its memory is what is judged)"
    yield figure("store", "walk_main_path_msgs_per_s", n / t, "msg/s", speed)
    yield figure(
        "store",
        "walk_peak_rss_added",
        (peak - base) / 1024,
        "MB",
        f"<= 50 MB ({walk})",
        baseline=base / 1024,
    )
    _, t_big, _, _ = _walk(db_big, tid_big, "pages")
    _, t_small, _, _ = _walk(db_small, tid_small, "pages")
    goal = f"ratio <= 1.5 (paging cost independent of trace length: {big:,} vs {small:,})"
    yield figure(
        "store", f"page_200_at_{big}", t_big / 150 * 1000, "ms", goal, baseline=t_small / 150 * 1000
    )
    yield from _tokens(quick, 20_000 if smoke else 200_000)
