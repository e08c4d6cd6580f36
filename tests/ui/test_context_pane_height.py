"""The Context pane at the smallest window we support: its two tables keep rows in sight."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.conftest import open_window
from ui.settings import AppSettings


def _rows_in_sight(view: Any) -> float:
    """How many rows of ``view`` its viewport shows (whole or not)."""
    height = view.verticalHeader().defaultSectionSize()
    return view.viewport().height() / height


def test_the_context_tables_keep_rows_in_sight_at_1280x720(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    """Screenshot review: at 1280×720 the call's item table showed one row and a half
    (header, #0, half of #1) below the token bar, its legend and the summary, with the
    Entered/Left tables sharing the little height left. The three are tabs of one area
    now, the items first, each with all of its height (the bar, its legend and the summary
    above take the rest of a dock ~380 px high); the tab names say how many rows."""
    from tests.ui.conftest import settle

    win = open_window(qtbot, settings, sample_path, size=(1280, 720))
    pane = win.context
    qtbot.waitUntil(lambda: pane.rows.rowCount() > 4, timeout=20_000)
    assert pane.tables.currentWidget() is pane.rows_view
    assert pane.tables.tabText(0) == f"Items ({pane.rows.rowCount()})"
    assert _rows_in_sight(pane.rows_view) >= 2, pane.rows_view.viewport().height()
    pane.tables.setCurrentWidget(pane.entered_view)  # as a click on its tab does
    settle(qtbot, win)
    assert pane.tables.tabText(1) == f"Entered ({pane.entered.rowCount()})"
    assert _rows_in_sight(pane.entered_view) >= 2, pane.entered_view.viewport().height()
