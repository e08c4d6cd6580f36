"""Review 13e: OpenHands writes its event times without a zone. The trace list and the
Message pane show a time whose zone the file did not record as the wall clock it wrote,
saying "time zone not recorded" (a V1 conversation: nothing in it is absolute), and a
V0 trajectory's times at the offset its model responses' ``created`` give, in the viewer's
zone like any other time, the tooltip naming that offset.

Expected values are read from the raw files with plain ``json`` and ``datetime``."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea

from core.importers.api import import_paths
from core.inspector.trace_list import TraceSummary, summaries
from core.store import Store
from tests.conftest import TRACES
from tests.ui.conftest import show_message
from tests.ui.test_imported_context_gui import _window_on
from ui.panes.trace_tree import TraceTreeModel, subtitle, tooltip
from ui.settings import AppSettings

OPENHANDS = TRACES / "openhands"
BASIC = OPENHANDS / "All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
CLI = next(iter(sorted(OPENHANDS.glob("OpenHands__OpenHands-CLI/tests/trajectories/*/*"))), None)
pytestmark = pytest.mark.skipif(
    not BASIC.is_file() or CLI is None, reason="shared/traces not present"
)


def _naive(text: str) -> datetime:
    when = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")
    assert when.tzinfo is None
    return when


def _cli_times() -> list[datetime]:
    assert CLI is not None
    return sorted(
        _naive(json.loads(p.read_text(encoding="utf-8"))["timestamp"])
        for p in CLI.glob("event-*.json")
    )


def _basic_start() -> float:
    """The trajectory's first event time at the offset its first model response gives."""
    events = json.loads(BASIC.read_text(encoding="utf-8"))
    first = next(e for e in events if "model_response" in e.get("tool_call_metadata", {}))
    created = first["tool_call_metadata"]["model_response"]["created"]
    naive_utc = _naive(first["timestamp"]).replace(tzinfo=UTC).timestamp()
    offset = round((naive_utc - created) / 900) * 900
    assert offset == -8 * 3600
    start = min(_naive(e["timestamp"]) for e in events)
    return start.replace(tzinfo=UTC).timestamp() - offset


def _short(when: time.struct_time) -> str:
    same_year = when.tm_year == time.localtime().tm_year
    return time.strftime("%b %d %H:%M" if same_year else "%Y-%m-%d", when)


def _rows(tmp_path: Path) -> dict[str, TraceSummary]:
    assert CLI is not None
    with Store.open(tmp_path / "s.db") as store:
        results = import_paths(store, [BASIC, CLI])
        with store.read() as r:
            rows = {s.trace.id: s for s in summaries(r)}
    return {res.path: rows[res.trace_id] for res in results}


def test_the_trace_list_says_time_zone_not_recorded(tmp_path: Path) -> None:
    assert CLI is not None
    rows = _rows(tmp_path)
    v1, v0 = rows[str(CLI)], rows[str(BASIC)]
    model = TraceTreeModel()
    model.set_rows([v0, v1])
    start_col = next(
        c for c in range(model.columnCount())
        if model.headerData(c, Qt.Orientation.Horizontal) == "Start"
    )  # fmt: skip
    first = _cli_times()[0]  # the wall clock the file wrote, whatever the viewer's zone
    wall = _short(first.timetuple())
    assert model.index(1, start_col).data() == f"{wall} (time zone not recorded)"
    assert subtitle(v1).startswith(f"{wall} (time zone not recorded) · ")
    tip = tooltip(v1)
    assert f"start {first:%Y-%m-%d %H:%M:%S} (time zone not recorded)" in tip
    assert "times: time zone not recorded: shown as the file wrote them (read as UTC)" in tip

    start = _basic_start()  # an instant: shown in the viewer's zone, as every other time
    assert v0.start == pytest.approx(start, abs=1e-6)
    assert model.index(0, start_col).data() == _short(time.localtime(start))
    assert "time zone not recorded" not in subtitle(v0)
    tip = tooltip(v0)
    assert f"start {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(start))}" in tip
    assert (
        "times: the file wrote local times without a zone: read at UTC−08:00, the offset "
        "its model responses' creation times give" in tip
    )


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 720)])
def test_the_message_facts_say_time_zone_not_recorded(
    qtbot: Any, settings: AppSettings, tmp_path: Path, size: tuple[int, int]
) -> None:
    assert CLI is not None
    res, win = _window_on(qtbot, settings, tmp_path / "v1.db", CLI, size=size)
    with Store.open(tmp_path / "v1.db") as s, s.read() as r:
        tool = next(m for m in r.iter_main_path(res.trace_id) if m.role == "tool")
    pane = show_message(qtbot, win, tool.sequence)
    facts = dict(pane.detail.facts)
    wall = datetime.fromtimestamp(tool.created_at, UTC).replace(tzinfo=None)
    assert wall in _cli_times(), "the stored time is the wall clock the file wrote, as UTC"
    assert facts["created"] == f"{wall:%Y-%m-%d %H:%M:%S} (time zone not recorded)"
    assert "time zone not recorded" in pane.facts.text()
    assert pane.facts.toolTip() == (
        "times: time zone not recorded: shown as the file wrote them (read as UTC)"
    )
    area = pane.facts.parentWidget().parentWidget()
    assert isinstance(area, QScrollArea)
    assert area.verticalScrollBar().maximum() == 0, "nothing of the grid is scrolled away"
    assert win.last_error is None


def test_the_message_facts_mark_a_derived_zone(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """The V0 trajectory's tool result at the smallest window: its time in the viewer's
    zone, marked "(zone derived)", the zone and its source in the tooltip; the grid stays
    whole (``tests/ui/test_message_facts_gui.py``: its long role takes a line of its own)."""
    res, win = _window_on(qtbot, settings, tmp_path / "v0.db", BASIC, size=(1280, 720))
    events = json.loads(BASIC.read_text(encoding="utf-8"))
    observation = next(e for e in events if "observation" in e and "cause" in e)
    want = _naive(observation["timestamp"]).replace(tzinfo=UTC).timestamp() + 8 * 3600
    with Store.open(tmp_path / "v0.db") as s, s.read() as r:
        result = next(m for m in r.iter_main_path(res.trace_id) if m.role == "tool")
    assert result.created_at == pytest.approx(want, abs=1e-6)
    pane = show_message(qtbot, win, result.sequence)
    local = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(want))
    assert dict(pane.detail.facts)["created"] == f"{local} (zone derived)"
    assert pane.facts.toolTip() == (
        "times: the file wrote local times without a zone: read at UTC−08:00, the offset "
        "its model responses' creation times give"
    )
    area = pane.facts.parentWidget().parentWidget()
    assert isinstance(area, QScrollArea)
    assert area.verticalScrollBar().maximum() == 0, "nothing of the grid is scrolled away"
    assert win.last_error is None
