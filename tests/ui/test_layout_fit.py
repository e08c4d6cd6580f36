"""The window fits 1280×720 and never resizes itself as content changes (issue 17)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize

from tests.ui.conftest import settle
from ui.elided import ElidedLabel
from ui.main_window import MainWindow
from ui.settings import AppSettings


def test_window_fits_1280x720_and_keeps_its_size(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    assert win.open_store(sample_path)
    settle(qtbot, win)
    assert win.size() == QSize(1280, 720)
    hint = win.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 720, hint
    tl = win.timeline
    for row in range(0, tl.model.rowCount(), max(1, tl.model.rowCount() // 8)):
        tl.select_view_row(row)
        settle(qtbot, win)
        assert win.size() == QSize(1280, 720), f"resized after selecting row {row}"
    tl.status.setText("a status line far longer than the timeline is wide " * 6)
    win.statusBar().showMessage("a status message far longer than the window " * 8)
    settle(qtbot, win)
    assert win.size() == QSize(1280, 720)
    for w in (tl.search_box, tl.only_matches, tl.next_button):
        assert w.isVisible() and w.geometry().right() <= tl.width(), w


def test_elided_label_keeps_the_full_text_as_tooltip(qtbot: Any) -> None:
    label = ElidedLabel("short")
    qtbot.addWidget(label)
    label.resize(300, 20)
    label.show()
    assert label.shown_text() == "short" and label.toolTip() == ""
    long = "word " * 60
    label.setText(long)
    assert label.shown_text().endswith("…") and label.toolTip() == long
    assert label.minimumSizeHint().width() == 0


def test_the_right_docks_get_their_share_of_the_shown_window(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    """Screenshot review: the sizes given while the docks were built did not hold, and the
    Message and Context docks kept their least width (276 px at 1600 and at 1280 wide),
    where the Context pane's tokens and the Message facts were cut. Once shown, they get
    ``RIGHT_SHARE`` of the window, and the window keeps its size."""
    from tests.ui.conftest import open_window
    from ui.window_layout import RIGHT_SHARE

    for size in ((1600, 1000), (1280, 720)):
        win = open_window(qtbot, settings, sample_path, size=size)
        want = round(size[0] * RIGHT_SHARE)
        for name in ("detail", "context"):
            assert abs(win.docks[name].width() - want) <= 8, (name, win.docks[name].width())
        assert win.size() == QSize(*size)
        assert win.timeline.width() >= 560, "the timeline keeps a useful width"


def test_a_reply_with_many_tool_calls_keeps_the_window_size(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: the Message pane's links ("result of … → #3 · result of … → #4
    · …") were one line, and selecting such a reply made a 1280-wide window 1584 wide. They
    wrap within the dock now, and every link stays whole."""
    from core.records import NewMessage, ToolCall
    from core.store import Store
    from tests.ui.conftest import open_window, show_message

    db = tmp_path / "calls.db"
    names = [f"fetch_quarterly_revenue_window_{n}" for n in range(6)]
    with Store.open(db) as store:
        tr = store.create_trace("many calls")
        calls = tuple(ToolCall(f"call_{n}", name, "{}") for n, name in enumerate(names))
        msgs = [NewMessage("user", "go"), NewMessage("assistant", "", tool_calls=calls)]
        msgs += [NewMessage("tool", f"r{n}", tool_call_id=f"call_{n}") for n in range(6)]
        store.append(tr.id, msgs)
    win = open_window(qtbot, settings, db, size=(1280, 720))
    pane = show_message(qtbot, win, 1)
    settle(qtbot, win)
    assert win.size() == QSize(1280, 720)
    text = pane.links.text()
    assert all(f"result of {name} → #{n + 2}" in text for n, name in enumerate(names))
    assert pane.links.isVisible() and pane.links.width() <= win.docks["detail"].width()
    assert pane.links.height() > 2 * pane.links.fontMetrics().height(), "it wraps"
