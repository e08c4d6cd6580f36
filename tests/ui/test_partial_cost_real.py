"""Review finding 1 in the window: the Traces pane marks a real trace's partial cost as a
lower bound (cell, subtitle, tooltip) and sorts it after every whole cost, either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.app.test_partial_cost_real import Cli, _imported, _no_opus_cache_price
from tests.conftest import TRACES
from tests.ui.conftest import open_window
from ui.panes.trace_tree import COST_COLUMN, SUBTITLE_ROLE, TRACE_ID_ROLE
from ui.settings import AppSettings

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")


def test_the_trace_list_marks_a_partial_cost_and_sorts_it_last(
    cli: Cli, tmp_path: Path, qtbot: Any, settings: AppSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _imported(cli, tmp_path)
    other = TRACES / "claude_code/iansherr__claude-code-log/test/test_data/real_projects"
    whole_file = next(other.glob("*/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"))
    code, _ = cli("--db", str(db), "import", str(whole_file))
    assert code == 0
    monkeypatch.setenv("CTXLENS_PRICES", str(_no_opus_cache_price(tmp_path)))
    rows = json.loads(cli("--db", str(db), "traces", "--json")[1])
    partial = next(r["id"] for r in rows if not r["cost"]["cost_complete"])
    whole = next(r["id"] for r in rows if r["cost"]["cost_complete"])
    win = open_window(qtbot, settings, db, (1280, 800))
    pane, model = win.traces, win.traces.table.model()
    for choice in ("Most expensive", "Cheapest first"):
        pane.sort.setCurrentText(choice)
        order = [model.index(i, 0).data(TRACE_ID_ROLE) for i in range(model.rowCount())]
        assert order.index(whole) < order.index(partial), choice
    ids = [model.index(i, 0).data(TRACE_ID_ROLE) for i in range(model.rowCount())]
    row = ids.index(partial)
    cell = model.index(row, COST_COLUMN)
    assert cell.data().startswith("≥ $") and "calls priced" in cell.data()
    assert "≥ $" in model.index(row, 0).data(SUBTITLE_ROLE)
    assert "calls without a price are not in it" in cell.data(Qt.ItemDataRole.ToolTipRole)
