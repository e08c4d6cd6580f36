"""A bench that crashes is caught here (issue 20).

``python -m bench gui`` crashed on main for a whole session (the window had started to
build its panes after the first frame, and the bench still read ``window.timeline`` at
once) and nothing noticed: this directory ran only the injection bench, never looked at
the exit code, and the harness printed an ordinary, "met" summary line for a bench that
had printed nothing. Now the GUI bench's smoke run (every worker once, on small stores)
runs here, and a crash fails the summary line and the exit code.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import figure
from bench.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def _broken(quick: bool = False) -> Iterator[dict[str, Any]]:
    yield figure("broken", "before the crash", 1.0, "ms", "<= 20 ms")
    raise AttributeError("'MainWindow' object has no attribute 'timeline'")


def test_a_crashing_bench_fails_its_summary_and_the_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = types.ModuleType("bench.bench_broken")
    module.run = _broken  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bench.bench_broken", module)
    monkeypatch.setattr(sys, "argv", ["bench", "broken", "--quick"])
    assert main() == 1
    out = capsys.readouterr()
    line = json.loads(out.out.splitlines()[-1])
    assert line["figure"] == "summary" and line["met"] is False
    assert "no attribute 'timeline'" in line["error"]
    assert line["value"] == 1  # what it measured before the crash is still counted
    assert "bench broken failed" in out.err


@pytest.mark.slow
def test_the_gui_bench_runs_every_worker() -> None:
    """Open, scroll and cold start each run once in their own window process."""
    out = subprocess.run(
        [sys.executable, "-m", "bench", "gui", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    summary, figures = lines[-1], lines[:-1]
    assert summary["figure"] == "summary" and "error" not in summary
    names = {f["figure"] for f in figures}
    for name in (
        "open to first paint, 10,000 messages",
        "scroll worst frame, 10,000 messages",
        "rows shown after a jump (placeholders replaced), worst, 10,000 messages",
        "cold start to main window (existing store)",
    ):
        assert name in names
    assert all(f["value"] > 0 for f in figures)
