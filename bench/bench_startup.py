"""Start-up benchmarks (issue 17), each against a baseline measured side by side.

- ``ctxlens traces --json`` on the demo store vs ``python -c "import sqlite3"`` (goal ≤ 3×).
- Cold start to a painted main window on an existing store vs a bare PySide6 window
  (goal ≤ 2×), and a first start (no store yet: the window comes first, the demo store is
  recorded after it) vs the same bare window (goal ≤ 3×).

Every run is a fresh process (offscreen Qt); runs alternate with their baseline so load on
this shared machine hits both alike, and the best of N counts. Values are CPU seconds
(user + system) of the process, which noise on a loaded machine distorts least; wall
seconds are given too (``wall_s``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import figure

ROOT = Path(__file__).resolve().parents[1]
NAME = "startup"


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(cpu_s, wall_s) of one run of ``cmd``."""
    cpu0, t0 = _cpu_children(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    wall, cpu = time.perf_counter() - t0, _cpu_children() - cpu0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}… failed: {proc.stderr[-1500:]}")
    return cpu, wall


def _best_pair(
    a: list[str], b: list[str], n: int, env: dict[str, str], warm: bool = True
) -> dict[str, float]:
    """Best-of-n CPU and wall for ``a`` and its baseline ``b``, run alternately (after one
    untimed run of each, which leaves the bytecode cache an installed app has)."""
    if warm:
        _timed(a, env)
        _timed(b, env)
    runs: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
    for _ in range(n):
        runs["a"].append(_timed(a, env))
        runs["b"].append(_timed(b, env))
    return {
        "cpu": min(c for c, _ in runs["a"]),
        "wall": min(w for _, w in runs["a"]),
        "base_cpu": min(c for c, _ in runs["b"]),
        "base_wall": min(w for _, w in runs["b"]),
    }


def _store() -> Path:
    from bench.bench_gui import sample_store

    return sample_store()


def _env() -> dict[str, str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    env.pop("CTXLENS_DB", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from .pyc files
    return env


def run(quick: bool = False, smoke: bool = False) -> Iterator[dict[str, Any]]:
    n = 1 if smoke else 3 if quick else 7
    env = _env()
    db = str(_store())
    py = sys.executable
    cli = [py, "-m", "app", "--db", db, "traces", "--json"]
    r = _best_pair(cli, [py, "-c", "import sqlite3"], n, env, not smoke)
    yield _fig("ctxlens traces --json vs python -c 'import sqlite3'", r, "≤ 3×", 3.0)

    bare = [py, "-m", "bench.bench_startup", "--worker", "bare"]
    cold = [py, "-m", "bench.bench_startup", "--worker", "window", db]
    r = _best_pair(cold, bare, n, env, not smoke)
    yield _fig("cold start to painted main window vs bare PySide6 window", r, "≤ 2×", 2.0)

    with tempfile.TemporaryDirectory(prefix="ctxlens-first-") as tmp:
        first = [py, "-m", "bench.bench_startup", "--worker", "first", tmp]
        r = _best_pair(first, bare, n, env, not smoke)
    yield _fig("first start (no store) to painted main window vs bare PySide6", r, "≤ 3×", 3.0)


def _fig(name: str, r: dict[str, float], goal: str, limit: float) -> dict[str, Any]:
    out = figure(NAME, name, r["cpu"], "s cpu", goal, baseline=r["base_cpu"])
    out["met"] = out["ratio"] is not None and out["ratio"] <= limit
    out["wall_s"] = round(r["wall"], 4)
    out["baseline_wall_s"] = round(r["base_wall"], 4)
    out["wall_ratio"] = round(r["wall"] / r["base_wall"], 4)
    return out


# -- workers: one process each; exit once the window's first frame is painted ---------------
def _exit_after_first_paint(app: Any, window: Any) -> None:
    from PySide6.QtCore import QEvent, QObject, QTimer

    class FirstPaint(QObject):
        def eventFilter(self, obj: Any, event: Any) -> bool:
            painted = event.type() == QEvent.Type.Paint and getattr(obj, "window", None)
            if painted and obj.window() is window:
                QTimer.singleShot(0, lambda: os._exit(0))  # the frame completes first
            return False

    watcher = FirstPaint()
    app.installEventFilter(watcher)
    window.show()
    app.exec()


def worker_bare() -> None:
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    app = QApplication(sys.argv[:1])
    window = QMainWindow()
    window.setCentralWidget(QLabel("bare PySide6 window"))
    window.resize(1600, 1000)  # the main window's default size
    _exit_after_first_paint(app, window)


def worker_window(db: str, build: bool = False) -> None:
    from app.gui import GuiOptions, make_window

    settings = Path(tempfile.mkdtemp(prefix="ctxlens-bench-")) / "s.ini"
    app, window = make_window(GuiOptions(db=db, settings=str(settings), build_store=build))
    _exit_after_first_paint(app, window)


def main(argv: list[str]) -> None:
    mode = argv[argv.index("--worker") + 1]
    if mode == "bare":
        worker_bare()
    elif mode == "window":
        worker_window(argv[-1])
    elif mode == "first":
        worker_window(str(Path(argv[-1]) / f"first-{os.getpid()}.db"), build=True)
    print(json.dumps({"error": f"unknown worker {mode}"}))
    raise SystemExit(2)


if __name__ == "__main__":
    main(sys.argv)
