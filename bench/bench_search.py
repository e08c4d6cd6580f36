"""Search across traces (issue 21): query time on a store of many traces.

Full size: 1,000 traces × 5,000 messages = 5M messages (built once into bench/out/, with
the full-text index caught up); ``--quick``: 100 × 1,000. Each query runs the way the GUI
and ``ctxlens search`` run it (``core/search/engine.py:search``, 200 hits, newest first).
Goal: ≤ 200 ms per query at full size. Baseline: the same words as a ``LIKE`` scan over
every message (what a search costs without the index), measured in the same run.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import figure
from bench.synth import OUT
from core.search.engine import search
from core.search.index import catch_up
from core.search.query import parse
from core.store import Store

WORDS = [f"w{i:04d}" for i in range(4000)]
TOOLS = ("read_file", "grep", "bash", "render_chart", "query_events")
QUERIES = (
    ("common word", "shard"),
    ("rare word", "kestrelwing"),
    ("two words", "w0007 w0011"),
    ("word + source filter", "w0042 source:codex"),
    ("tool filter", "tool:render_chart"),
    ("role filter", "role:tool"),
    ("trace filter only", "has:error"),
    ("cost bound", "shard cost>1"),
)
BOUNDS = (
    ("cost bound alone", "cost>1"),
    ("token bound alone", "tokens>1500000"),
)


def _rows(rng: random.Random, trace_id: str, n: int, rare: bool) -> list[tuple[Any, ...]]:
    """Message rows of one linear trace (line 0, depth = sequence), an agent's rhythm."""
    out = []
    for i in range(n):
        text = " ".join(rng.choices(WORDS, k=12))
        role, content, calls, call_id, name = (
            "assistant",
            f"Shard {i % 97} ok. {text}",
            None,
            None,
            None,
        )
        if i % 4 == 0:
            extra = " kestrelwing" if rare and i == 8 else ""
            role, content = "user", f"Step {i}: look at shard {i % 97}. {text}{extra}"
        elif i % 4 == 1:
            args = json.dumps({"shard": i % 97, "q": text[:40]})
            content = ""
            calls = json.dumps([{"id": f"c{i}", "name": TOOLS[i % 5], "arguments": args}])
        elif i % 4 == 2:
            role, content, call_id, name = "tool", f"rows: {text}", f"c{i - 1}", TOOLS[(i - 1) % 5]
        parent = i - 1 if i else None
        out.append((trace_id, i, parent, 0, i, role, content, calls, call_id, name, 40, i))
    return out


def _build(path: Path, traces: int, per_trace: int, calls: int) -> None:
    """Rows written with plain sqlite3 into a store's schema (5M messages through the
    writer would take most of an hour here); then the full-text index is caught up."""
    Store.open(path).close()
    rng = random.Random(21)
    sources = ("claude-code", "codex", "ctxlens", "inspect")
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA synchronous=OFF")
    for k in range(traces):
        tid = f"bench{k:06d}"
        con.execute("BEGIN")
        con.execute(
            "INSERT INTO traces (id, title, source, created_at, head_sequence, next_sequence, "
            "next_line, message_count) VALUES (?,?,?,?,?,?,1,?)",
            (tid, f"trace {k}", sources[k % 4], 1.7e9 + k, per_trace - 1, per_trace, per_trace),
        )
        con.execute(
            "INSERT INTO lines VALUES (?,0,NULL,0,0,?,?,NULL,NULL)",
            (tid, per_trace - 1, per_trace - 1),
        )
        con.executemany(
            "INSERT INTO messages (trace_id, sequence, parent_sequence, line, depth, role, "
            "content, tool_calls, tool_call_id, name, token_count, created_at, kind, "
            "agent_name) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,'message','main')",
            _rows(rng, tid, per_trace, rare=k % 97 == 5),
        )
        con.executemany(
            "INSERT INTO llm_calls (trace_id, call_index, head_sequence, context, "
            "request_sha256, model, usage, error, agent_name, created_at) "
            "VALUES (?,?,?,'[]',?,?,?,?,'main',0)",
            [
                (tid, c, c * 100, "0" * 64, ("gpt-4o", "claude-sonnet-4", "local")[k % 3],
                 json.dumps({"prompt_tokens": 20_000 + 100 * c, "completion_tokens": 300}),
                 "rate limited" if k % 50 == 0 and c == 0 else None)
                for c in range(calls)
            ],
        )  # fmt: skip
        con.execute("COMMIT")
    con.close()
    with Store.open(path) as store, store.write() as w:
        catch_up(w.conn)


def _store(traces: int, per_trace: int, calls: int) -> Path:
    OUT.mkdir(exist_ok=True)
    name = f"search-{traces}x{per_trace}" + ("" if calls == per_trace // 100 else f"-{calls}c")
    path = OUT / f"{name}.db"
    if path.exists():
        return path
    tmp = OUT / f"{name}.building-{os.getpid()}.db"
    _build(tmp, traces, per_trace, calls)
    os.replace(tmp, path)
    for suffix in ("-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return path


def _median_ms(fn: Any, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _like_scan_ms(store: Store, word: str) -> float:
    from sqlalchemy import func, select

    from core.store import schema as t

    def scan() -> None:
        with store.read() as r:
            q = select(func.count()).where(t.messages.c.content.contains(word))
            r.conn.execute(q).scalar()

    return _median_ms(scan, repeat=1)


def _full_pass_ms(store: Store) -> float:
    """What a bound cost before the per-trace sums: every call's usage read and priced."""
    from core.cost.compute import totals_by_trace
    from core.cost.stored import call_usages
    from core.cost.table import load_table

    table = load_table()

    def judge() -> None:
        with store.read() as r:
            totals_by_trace(call_usages(r), table)

    return _median_ms(judge, repeat=3)


def run(quick: bool = False, smoke: bool = False) -> Iterator[dict[str, Any]]:
    traces, per_trace = (10, 200) if smoke else (100, 1000) if quick else (1000, 5000)
    yield from measure(traces, per_trace, per_trace // 100)


def measure(traces: int, per_trace: int, calls: int) -> Iterator[dict[str, Any]]:
    """The figures on a store of ``traces`` × ``per_trace`` messages, ``calls`` calls each."""
    size = traces * per_trace
    with Store.open(_store(traces, per_trace, calls)) as store:
        baseline = _like_scan_ms(store, "kestrelwing")
        for name, text in QUERIES:
            yield _query_figure(store, name, text, size, traces, baseline)
        baseline = _full_pass_ms(store)
        for name, text in BOUNDS:
            fig = _query_figure(store, name, text, size, traces, baseline)
            fig["figure"] += f", {traces * calls:,} calls; baseline: a pass over every call"
            yield fig


def _query_figure(
    store: Store, name: str, text: str, size: int, traces: int, baseline: float
) -> dict[str, Any]:
    query = parse(text)
    search(store, query)  # warm the page cache (and catch the index and sums up)
    ms = _median_ms(lambda: search(store, query))
    return figure("search", f"{name} ({text}), {size:,} messages in {traces} traces", ms, "ms",
                  "<= 200 ms at 5M messages", baseline=baseline, met=ms <= 200)  # fmt: skip
