"""Importing from the window: one row per path, bad input listed, cancel leaves nothing partial."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.inspector.imports import import_for_window
from core.store import Store
from tests.conftest import TRACES

BASIC = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
CODEX = next(TRACES.glob("codex/jnarowski__agentcmd/**/rollout-*.jsonl"), None)

pytestmark = pytest.mark.skipif(
    not BASIC.is_file() or CODEX is None, reason="shared traces missing"
)


def _traces(store: Store) -> list[str]:
    return [t.id for t in store.traces()]


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def test_good_bad_and_unknown_paths_each_get_a_row(store: Store, tmp_path: Path) -> None:
    assert CODEX is not None
    truncated = tmp_path / "truncated.jsonl"
    data = CODEX.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])  # cut in the middle of a line
    notes = tmp_path / "notes.txt"
    notes.write_text("not a trace\n")
    missing = tmp_path / "gone.json"
    report = import_for_window(store, [BASIC, truncated, notes, missing])
    by_path = {r.path: r for r in report.rows}
    assert by_path[str(BASIC)].status == "imported" and by_path[str(BASIC)].messages > 0
    for bad in (truncated, notes, missing):
        row = by_path[str(bad)]
        assert row.status == "error" and str(bad.name) in row.detail
    assert _traces(store) == [by_path[str(BASIC)].trace_id], "only the good file left a trace"
    assert report.first_trace == by_path[str(BASIC)].trace_id
    assert "imported 1 trace" in report.headline() and "3 failed" in report.headline()


def test_importing_again_points_at_the_existing_trace(store: Store) -> None:
    first = import_for_window(store, [BASIC])
    again = import_for_window(store, [BASIC])
    assert [r.status for r in again.rows] == ["already imported"]
    assert again.new_traces == [] and again.first_trace == first.first_trace
    assert len(_traces(store)) == 1


def test_cancel_mid_file_rolls_back_the_unit(store: Store) -> None:
    assert CODEX is not None
    cancel = threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done > 0:
            cancel.set()  # from inside the read: the next check stops this unit

    report = import_for_window(store, [CODEX], progress=progress, cancel=cancel)
    assert seen and seen[0][0] < seen[0][1], "stopped part-way through the file"
    assert report.cancelled and [r.status for r in report.rows] == ["not imported (cancelled)"]
    assert _traces(store) == [], "nothing partial"
    assert _lines(CODEX) > 1
