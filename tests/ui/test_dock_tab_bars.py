"""The window shows one tab bar per tabbed dock group, none over a pane, also after
Reset layout. (When a hidden window forms its second dock group, Qt makes a spare bar that
it deletes from the event loop later; a screenshot script that only calls
``processEvents`` still shows it over the Traces pane. The running app does not.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

from core.store import Store
from tests.sample_trace import write_sample
from tests.ui.conftest import open_window
from ui.settings import AppSettings


def _bars(win: QMainWindow) -> list[tuple[tuple[str, ...], Any]]:
    direct = Qt.FindChildOption.FindDirectChildrenOnly
    return [
        (tuple(b.tabText(i) for i in range(b.count())), b.geometry())
        for b in win.findChildren(QTabBar, options=direct)
        if b.isVisible()
    ]


def _check(win: QMainWindow) -> None:
    bars = _bars(win)
    tabs = sorted(t for t, _ in bars)
    assert tabs == [
        ("Goals", "Sources"),
        ("Skills", "Grants", "Budget", "Delegation"),
    ], tabs
    panes = [d.geometry() for d in win.findChildren(QDockWidget) if d.isVisible()]
    panes.append(win.centralWidget().geometry())
    for t, rect in bars:
        assert not any(rect.intersects(p) for p in panes), (t, rect)


def test_one_tab_bar_per_dock_group_and_none_over_a_pane(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        write_sample(store)
    win = open_window(qtbot, settings, db)
    qtbot.waitUntil(lambda: len(_bars(win)) == 2, timeout=5_000)
    _check(win)
    win.registry["view.reset"].trigger()  # View → Reset layout
    qtbot.waitUntil(lambda: len(_bars(win)) == 2, timeout=5_000)
    _check(win)
