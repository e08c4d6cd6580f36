"""Screenshot review (h13c), findings 4 and 6: the Traces pane's second line at the window's
default size.

- A cost the tool recorded (SWE-agent's ``model_stats.total_cost``, any-agent's
  ``gen_ai.usage.*_cost``) comes before ctxlens's "no price", so it is in what the pane
  shows (it read "no pr…" and "no price · S…"), with its digits ($0.000125, not $0.0001);
  "no price" says it is about ctxlens's price table.
- The transcript's tokens are labelled as such ("177.3k tok in transcript"), and the usage
  the calls recorded is shown beside them (15.4M for the spotter session, summed from the
  raw file), with tooltips that say what each counts.
- Durations under a minute have one format (tenths: "3.9s", "1.2s", "0.4s"; it wrote "4s"
  beside "0.4s").
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFontMetrics

from core.importers.api import import_counted
from core.store import Store
from tests.app.test_swe_agent_calls_real import PYDICOM
from tests.conftest import TRACES
from tests.helpers.raw_usage import SPOTTER as SESSION
from tests.helpers.raw_usage import recorded_usage
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.panes.trace_tree import COLUMNS, SUBTITLE_ROLE, TRACE_ID_ROLE
from ui.settings import AppSettings

ANY_AGENT = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*.eval"))), None)
pytestmark = pytest.mark.skipif(
    not (PYDICOM.is_file() and ANY_AGENT.is_file() and SESSION.is_file() and EVAL),
    reason="shared/traces not present",
)


def _window(qtbot: Any, settings: AppSettings, db: Path, files: list[Path]) -> MainWindow:
    with Store.open(db) as store:
        import_counted(store, files)
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1600, 1000)  # the window's default size
    win.show()
    assert win.open_store(db)
    settle(qtbot, win)
    return win


def _rows(win: MainWindow, parent: QModelIndex | None = None) -> list[QModelIndex]:
    proxy = win.traces.proxy
    parent = parent or QModelIndex()
    out = []
    for r in range(proxy.rowCount(parent)):
        index = proxy.index(r, 0, parent)
        out += [index] if index.data(TRACE_ID_ROLE) else _rows(win, index)
    return out


def _shown(win: MainWindow, index: QModelIndex) -> str:
    """The second line as the pane paints it: elided to the title column's width
    (``TwoLineDelegate.paint``)."""
    table = win.traces.table
    width = table.columnWidth(0) - 8 - table.indentation() * (1 if index.parent().isValid() else 0)
    sub = str(index.data(SUBTITLE_ROLE))
    return QFontMetrics(table.font()).elidedText(sub, Qt.TextElideMode.ElideRight, width)


def test_a_recorded_cost_comes_first_and_is_seen(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    swe = json.loads(PYDICOM.read_text(encoding="utf-8"))["info"]["model_stats"]["total_cost"]
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    otel = sum(float(s["attributes"].get(f"gen_ai.usage.{k}_cost", 0))
               for s in spans for k in ("input", "output"))  # fmt: skip
    win = _window(qtbot, settings, tmp_path / "c.db", [PYDICOM, ANY_AGENT])
    rows = _rows(win)
    assert len(rows) == 2
    expected = {"SWE-agent": swe, "OTel gen_ai.usage": otel}
    for index in rows:
        sub, shown = str(index.data(SUBTITLE_ROLE)), _shown(win, index)
        source, usd = next((k, v) for k, v in expected.items() if k in sub)
        found = re.search(r"\$([0-9.,]+) recorded by", shown)
        assert found and f"recorded by {source}" in sub, f"the recorded cost is cut off: {shown!r}"
        value = float(found.group(1).replace(",", ""))
        assert abs(value - usd) <= 0.005 * usd, (value, usd)  # $0.000125, not $0.0001
        assert sub.index(" recorded by ") < sub.index("no price in ctxlens's table"), sub
        tip = str(index.data(Qt.ItemDataRole.ToolTipRole))
        assert f"cost: {source} recorded" in tip and "ctxlens's price table" in tip, tip
    assert win.last_error is None


def test_transcript_tokens_and_recorded_usage_are_told_apart(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    usage = recorded_usage(SESSION)
    assert usage > 10_000_000
    win = _window(qtbot, settings, tmp_path / "cc.db", [SESSION])
    (index,) = _rows(win)
    sub = str(index.data(SUBTITLE_ROLE))
    assert re.search(r"\b[0-9.]+k tok in transcript\b", sub), sub
    assert f"{usage / 1e6:.1f}M tok recorded usage" in sub, sub
    tip = str(index.data(Qt.ItemDataRole.ToolTipRole))
    assert "tokens in the transcript (counted by ctxlens" in tip, tip
    assert f"{usage:,} tokens of recorded usage" in tip, tip
    header = win.traces.model
    names = [c[0] for c in COLUMNS]
    for name in ("Transcript tok", "Recorded tok"):
        col = names.index(name)
        assert header.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    recorded = header.item(index.row(), names.index("Recorded tok"))
    assert recorded is not None and recorded.text() == f"{usage / 1e6:.1f}M"
    assert win.last_error is None


def test_durations_under_a_minute_have_one_format(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    assert EVAL is not None
    win = _window(qtbot, settings, tmp_path / "ev.db", [EVAL])
    seen = []
    for index in _rows(win):
        sub = str(index.data(SUBTITLE_ROLE))
        parts = sub.split(" · ")
        durations = [p for p in parts if re.fullmatch(r"[0-9.]+s", p)]
        assert len(durations) == 1, sub
        assert re.fullmatch(r"\d+\.\ds", durations[0]), sub
        seen.append(float(durations[0][:-1]))
    assert any(s >= 1 for s in seen) and any(s < 1 for s in seen), seen
    assert win.last_error is None


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 720)])
def test_the_compare_hint_is_whole_beside_its_button(
    qtbot: Any, settings: Any, sample_path: Path, size: tuple[int, int]
) -> None:
    """Screenshot review: "Ctrl+click a second trace to comp" ran into the Compare…
    button; the hint wraps in the width it has."""
    from tests.ui.conftest import open_window

    win = open_window(qtbot, settings, sample_path, size=size)
    hint, button = win.traces.hint, win.traces.compare_button
    assert hint.text() == "Ctrl+click a second trace to compare"
    assert hint.geometry().right() < button.geometry().left()
    one_line = hint.fontMetrics().horizontalAdvance(hint.text()) <= hint.contentsRect().width()
    wraps = hint.wordWrap() and hint.height() >= hint.heightForWidth(hint.width())
    assert one_line or wraps, "the whole hint is shown"


def test_a_cost_ctxlens_priced_says_so_where_the_line_is_cut(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: a cost ctxlens's price table made ("$0.04") and one the tool
    recorded ("$0.000125 recorded by OTel gen_ai.usage") were told apart only by words the
    pane's edge cut. The priced figure is named at once: "$10.81 priced"."""
    win = _window(qtbot, settings, tmp_path / "cc.db", [SESSION])
    (index,) = _rows(win)
    tip = str(index.data(Qt.ItemDataRole.ToolTipRole))
    found = re.search(r"cost by ctxlens's price table: (\$[0-9.,]+)", tip)
    assert found, tip  # the spotter session records no cost of its own
    assert f"{found.group(1)} priced" in _shown(win, index)
    assert " recorded by " not in str(index.data(SUBTITLE_ROLE))
    assert win.last_error is None
