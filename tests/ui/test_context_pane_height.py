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


def test_the_token_bar_is_as_tall_as_its_legend_and_names_each_limit_once(qtbot: Any) -> None:
    """The bar was 128 px whatever its legend held: in a narrow dock the legend wrapped to
    more rows than that and its last rows were cut; and every limit was named twice, above
    the bar and again in the legend, which made the legend a row longer at 1280×720. The
    bar is as tall as its legend at its width, and a limit is listed in the legend only
    when its label found no room above the bar."""
    from PySide6.QtGui import QFontMetrics

    from core.context.budget import Budget
    from core.context.view import COMPONENTS
    from ui.panes.bar import TokenBar

    bar = TokenBar()
    qtbot.addWidget(bar)
    bar.resize(280, 10)
    bar.show()
    parts = {c: 1_000 + i for i, c in enumerate(COMPONENTS)} | {"not_in_transcript": 500}
    budget = Budget(window=16_000, soft=7_200, hard=11_200, threshold_ratio=0.6)
    bar.set_data(parts, sum(parts.values()), budget)
    qtbot.waitUntil(lambda: bar.height() == bar.needed_height(bar.width()))
    fm = QFontMetrics(bar.font())
    layout = bar._legend_layout(bar.width(), fm)
    rows = 1 + max(row for row, _x, _entry in layout)
    legend_top = 2 * fm.height() + 6 + 22 + 8
    assert legend_top + rows * (fm.height() + 2) <= bar.height()
    assert bar.height() > 128, "this legend needs more than the old fixed height"
    above = [
        label
        for label, (_x, _lx, row) in zip(
            bar.marker_labels(), bar._marker_rows(6, bar.width() - 12, fm), strict=True
        )
        if row is not None
    ]
    listed = [entry[0] for _row, _x, entry in layout if entry[2]]
    assert sorted(above + listed) == sorted(bar.marker_labels())
    assert not set(above) & set(listed)
