"""Issue 20: every bench ends with a summary line that checks goals it can read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import figure
from bench.goals import judge, summary
from tests.conftest import PG_OPT_OUT, TRACES

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
        (1.9, "x", "ratio <= 2 (slimming vs counting its tokens once)", 1.9, True),
        (2.1, "x", "ratio <= 2 (slimming vs counting its tokens once)", 2.1, False),
        (0.0, "calls", "== 0 calls (redone tool calls)", None, True),
        (1.0, "calls", "== 0 calls (redone tool calls)", None, False),
        (1.0, "s", "< 2 s (comparison of a demo and its replay)", None, True),
        (0.12, "ratio", "<= 0.1 (share of the run's time)", None, False),
        (3.0, "ms", "ratio <= 1.3", None, None),  # no ratio measured: unchecked, never met
    ],
)
def test_plain_goals_are_judged(
    value: float, unit: str, goal: str, ratio: float | None, verdict: bool | None
) -> None:
    fig = figure("b", "f", value, unit, goal, ratio=ratio)
    assert judge(fig) is verdict


@pytest.mark.parametrize(
    ("value", "baseline", "goal", "verdict"),
    [
        (127, 127, "== baseline (every recorded call reproduced)", True),
        (126, 127, "== baseline (every recorded call reproduced)", False),
        (5, 9, "<= baseline", True),
        (127, None, "== baseline", None),  # the baseline could not be measured
    ],
)
def test_goals_against_the_baseline_are_judged(
    value: float, baseline: float | None, goal: str, verdict: bool | None
) -> None:
    assert judge(figure("b", "f", value, "calls", goal, baseline=baseline)) is verdict


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


def _bench(*args: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    out = subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    return out, [json.loads(line) for line in out.stdout.splitlines()]


def test_a_crashed_bench_is_not_met_and_says_why() -> None:
    out, lines = _bench("no_such_bench", "--smoke")
    assert out.returncode == 1
    assert [line["figure"] for line in lines] == ["summary"]
    assert lines[0]["met"] is False and "no_such_bench" in lines[0]["error"]
    assert "Traceback" in out.stderr


def test_a_summary_of_no_figures_is_not_met() -> None:
    assert summary("b", [])["met"] is False


# Benches of other areas broken when this test came (issue 20); strict: once fixed, the
# XPASS says to drop the entry.
BROKEN: dict[str, str] = {}
BENCHES = [
    pytest.param(name, marks=pytest.mark.xfail(reason=BROKEN[name], strict=True))
    if name in BROKEN
    else name
    for name in sorted(p.stem.removeprefix("bench_") for p in (ROOT / "bench").glob("bench_*.py"))
]


@pytest.mark.parametrize("name", BENCHES)
def test_every_bench_runs_and_every_figure_is_judged_or_informational(name: str) -> None:
    """Each bench at its smallest size (``--smoke``): no crash, a summary line that counts
    every figure, and no goal the judge cannot read (except a baseline that needs an
    optional extra, such as inspect_ai for the Inspect import: that one says so)."""
    if name == "import" and not TRACES.is_dir():
        pytest.skip("shared/traces not present (the import bench reads its real traces)")
    if name == "teamstore" and os.environ.get(PG_OPT_OUT) == "1" and not os.environ.get("CI"):
        pytest.skip(f"PostgreSQL runs skipped ({PG_OPT_OUT}=1)")
    out, lines = _bench(name, "--smoke")
    assert out.returncode == 0, out.stderr[-3000:]
    *figures, last = lines
    assert last["figure"] == "summary" and last["bench"] == name and "error" not in last
    assert figures and all(fig["figure"] != "summary" for fig in figures)
    counted = last["value"] + len(last["missed"]) + len(last["unchecked"])
    assert counted + len(last["informational"]) == len(figures)
    goals = {fig["figure"]: fig["goal"] for fig in figures}
    unreadable = [f for f in last["unchecked"] if "not installed" not in goals[f]]
    assert unreadable == [], {f: goals[f] for f in unreadable}
