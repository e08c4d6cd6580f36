"""Import benchmarks: throughput against plain ``json.loads`` and peak memory vs file size.

- Throughput: import the largest Claude Code session in shared/traces (with its subagent
  files) into an open store, compared with ``json.loads`` of every line of the same files,
  timed in turns in the same run, medians (goal: issue 13's ratio >= 0.3). The import ends
  when the trace is committed (token counts pending). The whole ``ctxlens import``
  (``import_counted``: exact counts counted while the files are read; goal: issue 20's ratio
  >= 0.2), after ``WARM_COUNTED`` counted imports (the per-process costs of counting: the
  encoding read, the counting threads' own encodings); the first of those is reported
  beside it. Diagnostics: the importing thread's CPU time, and into a new store each time
  (opening and migrating a store is a fixed cost, not per MB).
- Inspect: a 200-sample zstd `.eval` imported against `inspect_ai.log.read_eval_log` of
  the same file, in CPU seconds (see `inspect_vs_read_eval_log`; goal: ours over theirs
  ``ratio <= 1.0``).
- Peak RSS: a synthetic Claude Code session of 200 MB (``--quick``: 24 MB) and one an
  eighth of that size, each generated and imported (with counts) in its own subprocess;
  the ratio of the two peaks shows memory is constant in the file size (goal: ``ratio <=
  1.25``).

``python -m bench.bench_import --rss MB`` is the subprocess entry point.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import figure

ROOT = Path(__file__).resolve().parents[1]
TRACES = Path(os.environ.get("CTXLENS_SHARED", ROOT.parent / "shared")) / "traces"
BENCH = "import"


def _largest_claude_code() -> Path:
    files = [p for p in (TRACES / "claude_code").rglob("*.jsonl") if "subagents" not in p.parts]
    return max(files, key=lambda p: p.stat().st_size)


def _copies(src: Path, dest: Path, n: int) -> list[Path]:
    """``n`` copies of a session with its subagent files, each in its own folder. Copy ``i``
    ends with ``i`` blank lines (skipped by the reader), so its content hash is new and the
    importer does not take it for a re-import."""
    from core.importers.api import plan

    (unit,) = plan([src])
    out: list[Path] = []
    for i in range(n):
        folder = dest / f"copy-{i}"
        for f in unit.files:
            target = folder / f.relative_to(src.parent)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes() + (b"\n" * i if f == src else b""))
        out.append(folder / src.name)
    return out


#: Counted imports before the timed ones: the first reads the encoding; by the fourth
#: each counting thread encodes with its own (``core/tokens/encodings.py:thread_encoding``,
#: built once a thread has encoded ``OWN_AFTER_CHARS``): the state of a process that has
#: imported a few MB, which the judged figures measure.
WARM_COUNTED = 4


def _first_counted(store: Any, copies: Iterator[Path]) -> float:
    """Seconds of the first of ``WARM_COUNTED`` counted imports (the others warm up)."""
    from core.importers.api import import_counted

    t = time.perf_counter()
    import_counted(store, [next(copies)])
    took = time.perf_counter() - t
    for _ in range(WARM_COUNTED - 1):
        import_counted(store, [next(copies)])
    return took


def _median(values: list[float]) -> float:
    return statistics.median(values)


def throughput(quick: bool) -> Iterator[dict[str, Any]]:
    """Import MB/s against ``json.loads`` MB/s of the same files' lines, timed in turns
    (json, import, json, import, ...) so both see the same machine load; medians.

    The import is done when its trace is committed: stored whole and browsable, token
    counts pending (a reader counts what it reads). ``ctxlens import`` then fills the counts
    in while it reads (``import_counted``); that is the second figure, the whole command."""
    from core.importers.api import import_counted, import_paths, plan
    from core.store import Store

    path = _largest_claude_code()
    (unit,) = plan([path])
    size_mb = sum(f.stat().st_size for f in unit.files) / 1e6
    lines = [x for f in unit.files for x in f.read_bytes().splitlines() if x.strip()]
    repeat = 3 if quick else 9

    def loads() -> None:
        for x in lines:
            json.loads(x)

    with tempfile.TemporaryDirectory() as d:
        copies = iter(_copies(path, Path(d), 3 * repeat + 3 + WARM_COUNTED))
        with Store.open(Path(d) / "bench.db") as store:
            import_paths(store, [next(copies)])  # warm: compiled statements
            first = _first_counted(store, copies)
            yield figure(
                BENCH,
                "claude_code_first_import_and_token_counts_MBps",
                size_mb / first,
                "MB/s",
                "informational (the process's first counted import: the encoding is read "
                "from the shipped data, ~0.1 s once per process; the judged figures are "
                "per MB, after it)",
            )

            def imported() -> None:
                import_paths(store, [next(copies)])

            def imported_and_counted() -> None:
                import_counted(store, [next(copies)])

            cpu: list[tuple[float, float]] = []
            base, took = _turns(loads, imported, repeat, cpu)
            yield figure(
                BENCH,
                "claude_code_import_MBps",
                size_mb / took,
                "MB/s",
                "ratio >= 0.3 (of json.loads; issue 13)",
                baseline=size_mb / base,
            )
            base, took2 = _turns(loads, imported_and_counted, repeat)
            yield figure(
                BENCH,
                "claude_code_import_and_token_counts_MBps",
                size_mb / took2,
                "MB/s",
                "ratio >= 0.2 (of json.loads; issue 20: import plus exact "
                "token counts (TOK-1), the whole 'ctxlens import')",
                baseline=size_mb / base,
            )
            base_cpu, main_cpu = _median([b for b, _ in cpu]), _median([f for _, f in cpu])
            yield figure(
                BENCH,
                "claude_code_import_cpu_MBps",
                size_mb / main_cpu,
                "MB/s of CPU",
                "diagnostic: CPU time of the importing thread (less exposed to machine load)",
                baseline=size_mb / base_cpu,
            )
        n = [0]

        def cold() -> None:  # a new store each time: open, migrate, import, close
            n[0] += 1
            with Store.open(Path(d) / f"cold-{n[0]}.db") as fresh:
                import_paths(fresh, [next(copies)])

        base, took = _turns(loads, cold, repeat)
        yield figure(
            BENCH,
            "claude_code_import_into_new_store_MBps",
            size_mb / took,
            "MB/s",
            "diagnostic: with opening a new store (fixed cost per store, not per MB)",
            baseline=size_mb / base,
        )


def _turns(
    base: Any, fn: Any, repeat: int, cpu: list[tuple[float, float]] | None = None
) -> tuple[float, float]:
    """Median seconds of ``base`` and of ``fn``, run in turns; ``cpu`` collects the CPU
    seconds of this thread for each pair."""
    b: list[float] = []
    f: list[float] = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.thread_time()
        base()
        b.append(time.perf_counter() - t)
        c_base = time.thread_time() - c
        t, c = time.perf_counter(), time.thread_time()
        fn()
        f.append(time.perf_counter() - t)
        if cpu is not None:
            cpu.append((c_base, time.thread_time() - c))
    return _median(b), _median(f)


# -- peak memory ------------------------------------------------------------------------
def synthetic_session(path: Path, megabytes: float) -> int:
    """A Claude Code session of about ``megabytes`` MB: streamed replies, tool calls,
    tool results and progress records, every record with a fresh uuid."""
    target = int(megabytes * 1e6)
    written = turns = 0
    parent = None
    sid = str(uuid.uuid4())
    with path.open("w", encoding="utf-8") as f:
        while written < target:
            turns += 1
            recs, parent = _turn(turns, parent, sid)
            for rec in recs:
                line = json.dumps(rec) + "\n"
                f.write(line)
                written += len(line)
    return turns


def _turn(n: int, parent: str | None, sid: str) -> tuple[list[dict[str, Any]], str]:
    ids = [str(uuid.uuid4()) for _ in range(7)]
    base = {
        "sessionId": sid,
        "cwd": "/work",
        "version": "2.1.0",
        "isSidechain": False,
        "timestamp": "2026-01-01T00:00:00Z",
    }
    mid, call = f"msg_{n}", f"toolu_{n}"
    body = " ".join(f"line {n}.{i}: value={i * n % 9973}" for i in range(120))
    usage = {"input_tokens": 3, "output_tokens": 40}
    recs = [
        {
            **base,
            "type": "user",
            "uuid": ids[0],
            "parentUuid": parent,
            "message": {"role": "user", "content": f"Step {n}: check item {n}"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": ids[1],
            "parentUuid": ids[0],
            "message": {
                "id": mid,
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": f"Thinking about {n}"}],
                "usage": usage,
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": ids[2],
            "parentUuid": ids[1],
            "message": {
                "id": mid,
                "role": "assistant",
                "content": [{"type": "text", "text": f"Reading item {n}."}],
                "usage": usage,
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": ids[3],
            "parentUuid": ids[2],
            "message": {
                "id": mid,
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call,
                        "name": "Read",
                        "input": {"file_path": f"/work/item{n}.txt"},
                    }
                ],
                "usage": usage,
            },
        },
        {
            **base,
            "type": "progress",
            "uuid": ids[4],
            "parentUuid": ids[3],
            "toolUseID": call,
            "data": {"type": "hook_progress", "hookName": "PostToolUse:Read"},
        },
        {
            **base,
            "type": "user",
            "uuid": ids[5],
            "parentUuid": ids[3],
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": body}],
            },
        },
        {
            **base,
            "type": "assistant",
            "uuid": ids[6],
            "parentUuid": ids[5],
            "message": {
                "id": mid + "b",
                "role": "assistant",
                "content": [{"type": "text", "text": f"Item {n} is fine."}],
                "usage": usage,
            },
        },
    ]
    return recs, ids[6]


def _child(megabytes: float) -> None:
    """The whole ``ctxlens import`` (``import_counted``: the peak covers the counting)."""
    from core.importers.api import import_counted
    from core.store import Store

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "session.jsonl"
        synthetic_session(src, megabytes)
        size = src.stat().st_size
        t = time.perf_counter()
        with Store.open(Path(d) / "store.db") as store:
            (res,) = import_counted(store, [src])
            took = time.perf_counter() - t
        print(
            json.dumps(
                {"bytes": size, "seconds": took, "messages": res.messages, "peak_kb": _peak_kb()}
            )
        )


def _peak_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _measure(megabytes: float) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_import", "--rss", str(megabytes)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def peak_rss(quick: bool) -> Iterator[dict[str, Any]]:
    big_mb = 24.0 if quick else 200.0
    small = _measure(big_mb / 8)
    big = _measure(big_mb)
    yield figure(
        BENCH,
        f"peak_rss_{int(big_mb)}MB_jsonl",
        big["peak_kb"] / 1024,
        "MB",
        "ratio <= 1.25 (constant in file size: the peak over the peak at 1/8 of the size)",
        baseline=small["peak_kb"] / 1024,
    )
    yield figure(
        BENCH,
        f"synthetic_{int(big_mb)}MB_import_MBps",
        big["bytes"] / 1e6 / big["seconds"],
        "MB/s",
        "informational (the whole 'ctxlens import' of the synthetic session)",
    )


# -- Inspect AI against read_eval_log ----------------------------------------------------
#: The Inspect log is built from the real ``.eval`` in shared/traces: its samples repeated
#: (new ids) to ``SAMPLES``, every member zstd-compressed as current Inspect releases write
#: them. Both sides are timed in turns, in CPU seconds of the process (the import hashes the
#: file on a second thread; ``read_eval_log`` validates with pydantic), medians. Goal: the
#: import costs at most the CPU of reading the log with Inspect itself. ``inspect_ai`` is
#: only in the ``bench-inspect`` extra (installing it here would downgrade boto3, which the
#: team-store tests use); without it the figure says so.
SAMPLES = 200


def eval_log(dest: Path, n: int = SAMPLES, tag: str = "") -> Path:
    """A zstd ``.eval`` of ``n`` samples made from the real one's (ids and epochs renewed)."""
    from tests.core.importers.zstd_eval import write_eval

    src = next(iter(sorted((TRACES / "inspect_ai").rglob("*.eval"))))
    with zipfile.ZipFile(src) as z:
        names = z.namelist()
        header = json.loads(z.read("header.json"))
        real = [json.loads(z.read(x)) for x in names if x.startswith("samples/")]
    header["eval"]["dataset"]["sample_ids"] = list(range(1, n + 1))
    header["eval"]["run_id"] = f"bench{tag}"
    header["results"]["total_samples"] = header["results"]["completed_samples"] = n
    members = [("header.json", json.dumps(header).encode())]
    for i in range(n):
        s = dict(real[i % len(real)], id=i + 1, epoch=1)
        members.append((f"samples/{i + 1}_epoch_1.json", json.dumps(s).encode()))
    return write_eval(dest, members)


def inspect_vs_read_eval_log(quick: bool) -> Iterator[dict[str, Any]]:
    """The side-by-side Inspect figure (module docstring: how the log is built and timed):
    our CPU seconds over ``read_eval_log``'s, so the ratio is the issue's "≤ 1.0×"."""
    from core.importers.api import import_counted, import_paths
    from core.store import Store

    repeat = 3 if quick else 7
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        read_eval_log = None
    with tempfile.TemporaryDirectory() as d:
        logs = iter(
            [eval_log(Path(d) / f"log-{i}.eval", tag=str(i)) for i in range(2 * repeat + 2)]
        )
        first = next(logs)
        with Store.open(Path(d) / "bench.db") as store:
            import_paths(store, [first])  # warm: compiled statements, encodings

            def imported() -> None:
                import_paths(store, [next(logs)])

            def counted() -> None:
                import_counted(store, [next(logs)])

            def read() -> None:
                if read_eval_log is not None:
                    read_eval_log(str(first))

            base, took = _cpu_turns(read, imported, repeat)
            if read_eval_log is None:
                yield figure(
                    BENCH,
                    "inspect_200_samples_import_cpu_s",
                    took,
                    "s of CPU",
                    "inspect_ai not installed: no read_eval_log baseline in this run",
                )
            else:
                yield figure(
                    BENCH,
                    "inspect_200_samples_import_cpu_s",
                    took,
                    "s of CPU",
                    "ratio <= 1.0 (import CPU over inspect_ai.log.read_eval_log's, same file)",
                    baseline=base,
                )
            base, took = _cpu_turns(read, counted, repeat)
            yield figure(
                BENCH,
                "inspect_200_samples_import_and_token_counts_cpu_s",
                took,
                "s of CPU",
                "diagnostic: the whole 'ctxlens import' (import plus exact token counts) "
                "over read_eval_log",
                baseline=base if read_eval_log is not None else None,
            )


def _cpu_turns(base: Any, fn: Any, repeat: int) -> tuple[float, float]:
    b: list[float] = []
    f: list[float] = []
    for _ in range(repeat):
        c = time.process_time()
        base()
        b.append(time.process_time() - c)
        c = time.process_time()
        fn()
        f.append(time.process_time() - c)
    return statistics.median(b), statistics.median(f)


def run(quick: bool = False) -> Iterator[dict[str, Any]]:
    yield from throughput(quick)
    yield from inspect_vs_read_eval_log(quick)
    yield from peak_rss(quick)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rss":
        _child(float(sys.argv[2]))
    else:
        for fig in run(quick="--quick" in sys.argv):
            print(json.dumps(fig), flush=True)
