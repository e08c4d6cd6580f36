"""Team store: append throughput and main-path paging, PostgreSQL vs SQLite.

PostgreSQL is a throwaway local cluster (``tests/servers/postgres.py``, fsync off like the
tests) unless ``CTXLENS_BENCH_PG_URL`` names an existing empty database. SQLite is a file
in a temp folder (WAL, synchronous=NORMAL, the shipped settings). Token counts are given so
the figures measure the store, not tiktoken.

Figures: bulk append (1000-message transactions) and single-message transactions, as
messages/s with SQLite as the baseline; page time (100 rows) at the start of a 10k trace
(baseline) vs the end of a 100k trace — a ratio near 1 means paging cost does not grow
with trace length.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import figure
from core.records import NewMessage
from core.store import Store

NAME = "teamstore"
PAGE = 100
GOAL_THROUGHPUT = {
    "sqlite": "informational (the baseline of the PostgreSQL figure beside it)",
    "postgresql": "informational (depends on the server, its disk and the link; SQLite beside it)",
}


@contextlib.contextmanager
def _pg_url() -> Iterator[str]:
    given = os.environ.get("CTXLENS_BENCH_PG_URL")
    if given:
        yield given
        return
    from tests.servers.postgres import PgCluster

    with PgCluster.start() as pg:
        yield pg.create_database()


def _messages(start: int, n: int) -> list[NewMessage]:
    text = "an ordinary agent message of about a hundred characters, the usual size of a step. "
    return [
        NewMessage("user" if i % 2 else "assistant", f"{i} {text}", token_count=25)
        for i in range(start, start + n)
    ]


def _bulk(store: Store, trace_id: str, total: int, batch: int = 1000) -> float:
    """Seconds to append ``total`` messages in ``batch``-sized transactions."""
    t0 = time.perf_counter()
    for start in range(0, total, batch):
        store.append(trace_id, _messages(start, min(batch, total - start)))
    return time.perf_counter() - t0


def _single(store: Store, trace_id: str, count: int) -> float:
    t0 = time.perf_counter()
    for i in range(count):
        store.append(trace_id, _messages(i, 1))
    return time.perf_counter() - t0


def _page_ms(
    store: Store, pages: dict[str, tuple[str, int]], repeats: int = 40
) -> dict[str, float]:
    """Median ms for one page of the main path (segments included) at each (trace, offset).

    The pages are timed round-robin so load from other processes hits all of them alike.
    """
    times: dict[str, list[float]] = {name: [] for name in pages}
    with store.read() as r:
        for _ in range(repeats):
            for name, (trace_id, offset) in pages.items():
                t0 = time.perf_counter()
                rows = r.main_path_page(trace_id, offset, PAGE)
                times[name].append((time.perf_counter() - t0) * 1000)
                assert len(rows) == PAGE, (name, len(rows))
    return {name: statistics.median(ts) for name, ts in times.items()}


def _measure(store: Store, small: int, large: int, singles: int) -> dict[str, float]:
    out: dict[str, float] = {}
    big = store.create_trace("large").id
    out["bulk_s"] = _bulk(store, big, large)
    short = store.create_trace("small").id
    _bulk(store, short, small)
    out["single_s"] = _single(store, store.create_trace("singles").id, singles)
    pages = {
        "page_start_small": (short, 0),
        "page_end_small": (short, small - PAGE),
        "page_start_large": (big, 0),
        "page_end_large": (big, large - PAGE),
    }
    out.update(_page_ms(store, pages))
    return out


def run(quick: bool = False, smoke: bool = False) -> Iterator[dict[str, Any]]:
    small, large, singles = (
        (200, 1_000, 30) if smoke else (2_000, 10_000, 300) if quick else (10_000, 100_000, 2_000)
    )
    with tempfile.TemporaryDirectory() as tmp:
        with Store.open(Path(tmp) / "bench.db") as s:
            lite = _measure(s, small, large, singles)
        with _pg_url() as url, Store.open(url, objects=Path(tmp) / "objects") as s:
            pg = _measure(s, small, large, singles)
    for label, res, base in (("sqlite", lite, None), ("postgresql", pg, lite)):
        info = GOAL_THROUGHPUT[label]
        yield figure(
            NAME,
            f"{label}: bulk append, {large} messages in 1000-message transactions",
            large / res["bulk_s"],
            "messages/s",
            info,
            baseline=None if base is None else large / base["bulk_s"],
        )
        yield figure(
            NAME,
            f"{label}: one message per transaction ({singles} transactions)",
            singles / res["single_s"],
            "messages/s",
            info,
            baseline=None if base is None else singles / base["single_s"],
        )
        for where in ("start", "end"):
            yield figure(
                NAME,
                f"{label}: page of {PAGE} at the {where} of a {large}-message trace",
                res[f"page_{where}_large"],
                "ms",
                "ratio <= 1.5 (vs the start of a short trace: independent of trace length)",
                baseline=res["page_start_small"],
            )
        yield figure(
            NAME,
            f"{label}: page of {PAGE} at the end of a {small}-message trace",
            res["page_end_small"],
            "ms",
            "ratio <= 1.5 (vs the start: independent of position)",
            baseline=res["page_start_small"],
        )
