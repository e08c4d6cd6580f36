"""The Message pane says which times were recorded (h13f): it said "created 2026-12-07
03:26:03" (the import) for the reply of a 2025-02-11 Inspect sample. Now the reply shows
its model event's time, and a message the file dates nowhere says "not recorded (trace
start …)" or "not recorded (imported …)". Expected times come from the raw files (plain
``zipfile``/``json``)."""

from __future__ import annotations

import json
import os
import time
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.conftest import TRACES
from tests.ui.conftest import open_window, show_message
from ui.main_window import MainWindow
from ui.settings import AppSettings

EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*popularity*.eval"))), None)
SWE = next(iter(sorted((TRACES / "swe_agent").rglob("pydicom__pydicom-1458.traj"))), None)
pytestmark = pytest.mark.skipif(EVAL is None or SWE is None, reason="shared/traces not present")


def _at(stamp: float, seconds: bool = True) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M",
                         time.localtime(stamp))  # fmt: skip


def _created(qtbot: Any, win: MainWindow, sequence: int) -> str:
    """The "created" fact of message ``sequence`` as the pane shows it (and its grid)."""
    pane = show_message(qtbot, win, sequence)
    (value,) = [v for k, v in pane.detail.facts if k == "created"]
    assert f">{value}</td>" in pane.facts.text(), "the grid shows the fact as it is"
    return value


def test_message_pane_on_an_inspect_sample(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    assert EVAL is not None
    with zipfile.ZipFile(EVAL) as z:
        sample = json.loads(z.read("samples/1_epoch_1.json"))
    assert [m["role"] for m in sample["messages"]] == ["system", "user", "assistant"]
    (model,) = [e for e in sample["events"] if e["event"] == "model"]
    (init,) = [e for e in sample["events"] if e["event"] == "sample_init"]
    assert sample["events"][0] is init and not sample.get("started_at")
    start = datetime.fromisoformat(init["timestamp"]).timestamp()
    reply = datetime.fromisoformat(model["timestamp"]).timestamp()
    db = tmp_path / "ev.db"
    assert cli("--db", str(db), "import", str(EVAL), "--json")[0] == 0
    rows = json.loads(cli("--db", str(db), "traces", "--json")[1])
    (trace,) = [r for r in rows if r["sample"]["id"] == sample["id"]]
    win = open_window(qtbot, settings, db, trace=trace["id"])
    assert _created(qtbot, win, 2) == _at(reply), "the reply: its model event's time"
    assert _created(qtbot, win, 1) == _at(start), "the input: the sample's start"
    assert _created(qtbot, win, 0) == f"not recorded (trace start {_at(start)})"
    assert '"created_recorded": false' in win.detail.raw.toPlainText()
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.grab().save(str(Path(shots) / "undated_inspect.png"))
    assert win.last_error is None


def test_message_pane_on_a_trajectory_that_dates_nothing(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    assert SWE is not None
    raw = json.loads(SWE.read_text(encoding="utf-8"))
    db = tmp_path / "swe.db"
    before = time.time()
    code, out = cli("--db", str(db), "import", str(SWE), "--json")
    after = time.time()
    assert code == 0
    (row,) = json.loads(out)
    win = open_window(qtbot, settings, db, trace=row["trace_id"])
    last = len(raw["history"]) - 1
    shown = _created(qtbot, win, last)
    assert shown in {f"not recorded (imported {_at(t, seconds=False)})" for t in (before, after)}
    assert _created(qtbot, win, 0) == shown, "one fill for the whole trace"
    assert win.last_error is None


def test_search_all_says_a_message_time_was_not_recorded(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    """The "Search all traces…" window showed the import time in its When column for a
    message of a trajectory that dates nothing; a recorded one (the Inspect reply) keeps
    its time."""
    assert SWE is not None and EVAL is not None
    with zipfile.ZipFile(EVAL) as z:
        samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    replies = {datetime.fromisoformat(e["timestamp"]).timestamp()
               for s in samples for e in s["events"] if e["event"] == "model"}  # fmt: skip
    db = tmp_path / "both.db"
    code, out = cli("--db", str(db), "import", str(SWE), str(EVAL), "--json")
    assert code == 0
    swe = next(r["trace_id"] for r in json.loads(out) if r["format"] == "swe-agent")
    win = open_window(qtbot, settings, db, trace=swe)
    search = win.search_all.show()
    qtbot.addWidget(search)
    qtbot.keyClicks(search.box, "role:system")
    qtbot.keyClick(search.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "hits in" in search.status.text(), timeout=10_000)
    model = search.model
    whens = {model.hits[n].trace_id: model.index(n, 1).data() for n in range(model.rowCount())}
    assert len(whens) == 11 and set(whens.values()) == {"not recorded"}
    search.box.clear()
    qtbot.keyClicks(search.box, "role:assistant source:inspect")
    qtbot.keyClick(search.box, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: model.rowCount() and all(h.source == "inspect" for h in model.hits),
        timeout=10_000,
    )
    shown = {model.index(n, 1).data() for n in range(model.rowCount())}
    assert shown == {_at(t, seconds=False) for t in replies}
    assert win.last_error is None
