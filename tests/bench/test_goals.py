"""Issue 20: every bench ends with a summary line that checks goals it can read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import figure
from bench.goals import judge, summary

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("value", "unit", "goal", "ratio", "verdict"),
    [
        (12.0, "ms", "<= 20 ms (median)", None, True),
        (25.0, "ms", "<= 20 ms (median)", None, False),
        (0.8, "s", "≤ 1.0 s", None, True),
        (1.2, "x", "ratio <= 1.3", 1.2, True),
        (9.0, "us", "<= 10", None, True),
        (0.95, "share", ">= 0.9 (baseline: boundary moved every call)", None, True),
        (450.0, "MB", "≤ 400 MB for 1M", None, None),  # not one plain comparison
        (5.0, "MB", "<= 20 ms", None, None),  # another unit: not judged
    ],
)
def test_plain_goals_are_judged(
    value: float, unit: str, goal: str, ratio: float | None, verdict: bool | None
) -> None:
    fig = figure("b", "f", value, unit, goal, ratio=ratio)
    assert judge(fig) is verdict


def test_the_summary_names_what_missed_and_what_it_could_not_check() -> None:
    figs = [
        figure("b", "fast", 5, "ms", "<= 20 ms"),
        figure("b", "slow", 50, "ms", "<= 20 ms"),
        figure("b", "own", 1, "x", "complicated goal", met=True),
        figure("b", "vague", 1, "x", "smooth"),
        figure("b", "just so", 1, "x", "informational: for comparison"),
    ]
    line = summary("b", figs)
    assert (line["value"], line["baseline"]) == (2, 3)
    assert line["missed"] == ["slow"] and line["unchecked"] == ["vague"]
    assert line["informational"] == ["just so"] and line["met"] is False


def test_make_bench_prints_a_summary_line_per_bench() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "injection", "--quick"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]  # a crash is not a summary
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines and lines[-1]["figure"] == "summary" and lines[-1]["bench"] == "injection"
    assert "failed" not in lines[-1]
    figures = lines[:-1]
    assert lines[-1]["value"] + len(lines[-1]["missed"]) + len(lines[-1]["unchecked"]) + len(
        lines[-1]["informational"]
    ) == len(figures)
