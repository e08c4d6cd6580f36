"""Timeline of ``ctxlens import``'s counting (``CountsAhead``), to see where its wall goes.

    PYTHONPATH=<tree> python tools/counted_timeline.py [IMPORTS] [SHOWN]

Imports the bench's Claude Code session (``bench/bench_import.py:_largest_claude_code``)
``IMPORTS`` times (default 9, as the bench does) into one store with
``import_counted``, stamping (``time.perf_counter``, into a list, printed after) each job
sent, started, ended (on which thread, with its ``thread_time``), the importer's waits
for counts, ``finish`` and the commit, and reading each thread's
``/proc/self/task/TID/schedstat`` (CPU, run-queue wait) around each import. Prints one
summary line per import, the medians of all but the first, and the full timeline of the
last ``SHOWN`` imports (default 1). Diagnostic only: it wraps the methods it stamps.
docs/bench.md, "Import with counts, third look (hcount3)".
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.bench_import import _copies, _largest_claude_code
from core.importers import api, base, counting
from core.store import Store

Event = tuple[float, str, str, str]
EVENTS: list[Event] = []


def stamp(what: str, info: str = "") -> None:
    EVENTS.append((time.perf_counter(), threading.current_thread().name, what, info))


def instrument() -> None:
    """Wrap the methods whose moments make the timeline."""
    job_of = counting.CountsAhead._job_of
    count = counting.CountsAhead.count

    def stamped_job_of(self: Any, texts: list[Any], start: int) -> None:
        n = len(self._starts)
        chars = sum(len(c) + sum(len(x.arguments) for x in calls) for _, c, calls, _ in texts)
        stamp("submit", f"job{n} msgs={len(texts)} chars={chars}")
        counter = self._counter
        inner = counter.count_messages

        def job(texts: list[Any]) -> list[int]:
            cpu = time.thread_time()
            stamp("start", f"job{n}")
            try:
                return inner(texts)
            finally:
                stamp("end", f"job{n} cpu={1e3 * (time.thread_time() - cpu):.2f}ms")

        counter.count_messages = job
        try:
            job_of(self, texts, start)
        finally:
            del counter.count_messages

    def stamped_count(self: Any, ticket: int) -> int:
        waits = self._queues(ticket) or not self._jobs[self._job(ticket)].done()
        if not waits:
            return count(self, ticket)
        stamp("wait", f"ticket {ticket}, queued {len(self._queued)}")
        try:
            return count(self, ticket)
        finally:
            stamp("waited")

    counting.CountsAhead._job_of = stamped_job_of  # type: ignore[method-assign]
    counting.CountsAhead.count = stamped_count  # type: ignore[method-assign]
    for name in ("flush", "finish"):
        setattr(base.TraceBuilder, name, _around(getattr(base.TraceBuilder, name), name))
    api.fill_pending = _around(api.fill_pending, "fill_pending")  # type: ignore[assignment]


def _around(fn: Any, name: str) -> Any:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        stamp(name)
        try:
            return fn(*args, **kwargs)
        finally:
            stamp(f"{name}-end")

    return wrapped


def _sched(tid: int) -> tuple[float, float]:
    run, wait, _ = Path(f"/proc/self/task/{tid}/schedstat").read_text().split()
    return int(run) / 1e6, int(wait) / 1e6


def _threads() -> list[int]:
    pool = counting._COUNTING.get()
    return [threading.get_native_id(), *(t.native_id or 0 for t in pool._threads)]


def summary(events: list[Event], sched: list[tuple[float, float]]) -> dict[str, float]:
    t0 = events[0][0]

    def at(what: str, last: bool = False) -> float:
        times = [1e3 * (t - t0) for t, _, w, _ in events if w == what]
        return (max(times) if last else min(times)) if times else float("nan")

    waited, since = 0.0, None
    for t, _, what, _ in events:
        if what == "wait":
            since = t
        elif what == "waited" and since is not None:
            waited, since = waited + t - since, None
    starts = sorted({th: t for t, th, w, _ in reversed(events) if w == "start"}.values())
    wall = 1e3 * (events[-1][0] - t0)
    return {
        "wall": wall,
        "sent0": at("submit"),
        "start0": 1e3 * (starts[0] - t0) if starts else float("nan"),
        "start1": 1e3 * (starts[1] - t0) if len(starts) > 1 else float("nan"),
        "finish": at("finish"),
        "last_job": at("end", last=True),
        "rows": at("flush-end", last=True),
        "committed": at("fill_pending"),  # called once the import has committed
        "waited": 1e3 * waited,
        "main_cpu": sched[0][0],
        "main_queue": sched[0][1],
        "workers_cpu": sum(run for run, _ in sched[1:]),
        "workers_queue": sum(q for _, q in sched[1:]),
    }


def main(imports: int, shown: int) -> None:
    instrument()
    path = _largest_claude_code()
    (unit,) = api.plan([path])
    lines = [x for f in unit.files for x in f.read_bytes().splitlines() if x.strip()]
    rows: list[dict[str, float]] = []
    walls, loads = [], []
    with tempfile.TemporaryDirectory() as d:
        copies = iter(_copies(path, Path(d), imports + 1))
        with Store.open(Path(d) / "timeline.db") as store:
            api.import_paths(store, [next(copies)])  # warm, as the bench does
            for i in range(imports):
                t = time.perf_counter()
                for x in lines:
                    json.loads(x)
                loads.append(time.perf_counter() - t)
                EVENTS.clear()
                before = {tid: _sched(tid) for tid in _threads()}
                stamp("import")
                api.import_counted(store, [next(copies)])
                stamp("import-end")
                tids = _threads()
                after = [_sched(tid) for tid in tids]
                sched = [
                    (a[0] - b[0], a[1] - b[1])
                    for a, b in zip(after, [before.get(t, (0.0, 0.0)) for t in tids], strict=True)
                ]
                rows.append(summary(list(EVENTS), sched))
                walls.append(rows[-1]["wall"])
                print(" ".join(f"{k}={v:.1f}" for k, v in rows[-1].items()))
                if i >= imports - shown:
                    _dump(list(EVENTS))
    later = rows[1:] or rows
    print("median", " ".join(f"{k}={statistics.median(r[k] for r in later):.1f}" for k in rows[0]))
    ratio = statistics.median(loads) * 1e3 / statistics.median(walls)
    print(f"json.loads {1e3 * statistics.median(loads):.1f} ms, ratio {ratio:.3f}")


def _dump(events: list[Event]) -> None:
    t0 = events[0][0]
    print("-" * 72)
    for t, thread, what, info in events:
        print(f"{1e3 * (t - t0):8.2f} {thread[-14:]:>14} {what:12} {info}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    main(*(args + [9, 1][len(args) :]))
