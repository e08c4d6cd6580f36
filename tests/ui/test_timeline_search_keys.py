"""Timeline search and keys: plain text finds tool-call rows, a query does not follow the
user to another trace, Home/End/Page Up/Page Down move the selection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core.inspector.timeline import TimelineRow
from core.records import NewMessage, ToolCall
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow


def _search(window: MainWindow, qtbot: Any, text: str) -> Any:
    tl = window.timeline
    tl.search_box.setText(text)
    with qtbot.waitSignal(tl.searched, timeout=10_000) as sig:
        tl.search_box.returnPressed.emit()
    return sig.args[0]


def test_plain_text_finds_tool_call_rows(window: MainWindow, qtbot: Any) -> None:
    result = _search(window, qtbot, "apply_patch")
    model = window.timeline.model
    rows = [model.path_row(h.row) for h in result.on_path if h.row is not None]
    calls = [r for r in rows if isinstance(r, TimelineRow) and r.role == "assistant"]
    assert calls and all("apply_patch" in r.tool_names for r in calls)
    tool_only = _search(window, qtbot, "tool:apply_patch")
    assert {h.sequence for h in tool_only.on_path} <= {h.sequence for h in result.on_path}


def test_search_and_filter_reset_on_another_trace(
    window: MainWindow, qtbot: Any, sample_path: Path
) -> None:
    with Store.open(sample_path) as s, s.write() as w:
        other = w.create_trace("other")
        call = ToolCall("c1", "apply_patch", '{"p": 1}')
        w.append(
            other.id, [NewMessage("user", "go"), NewMessage("assistant", "", tool_calls=(call,))]
        )
    tl = window.timeline
    _search(window, qtbot, "apply_patch")
    tl.only_matches.setChecked(True)
    assert 0 < tl.model.rowCount() < tl.model.length + len(tl.model.bands)
    assert tl.match_label.text()
    with qtbot.waitSignal(tl.loaded, timeout=10_000):
        window.open_trace(other.id)
    settle(qtbot, window)
    assert tl.search_box.text() == "" and not tl.only_matches.isChecked()
    assert tl.match_label.text() == ""
    assert tl.model.rowCount() == 2, "the other trace shows all its rows"


def test_home_end_and_page_keys_move_in_the_timeline(window: MainWindow, qtbot: Any) -> None:
    view = window.timeline.view
    model = window.timeline.model
    assert model.rowCount() > 20
    view.setFocus()
    window.timeline.select_view_row(5)
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.currentIndex().row() == 0
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.currentIndex().row() == model.rowCount() - 1
    qtbot.keyClick(view, Qt.Key.Key_PageUp)
    up = view.currentIndex().row()
    assert 0 <= up < model.rowCount() - 2
    qtbot.keyClick(view, Qt.Key.Key_PageDown)
    assert view.currentIndex().row() > up
    assert window.timeline.selected_sequence() is not None
