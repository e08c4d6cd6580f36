"""Issue 21: "Search all traces…" in the window: a query, its hits, opening one."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow


def _expected(store: Store, word: str) -> set[tuple[str, int]]:
    """Messages that contain ``word`` as a word, read straight from the store."""
    out: set[tuple[str, int]] = set()
    with store.read() as r:
        for trace in r.traces():
            for m in r.all_messages(trace.id):
                words = m.content.lower().replace(".", " ").replace(",", " ").split()
                if word in words:
                    out.add((trace.id, m.sequence))
    return out


def test_search_all_traces_opens_the_chosen_message(window: MainWindow, qtbot: Any) -> None:
    store = window.session.store
    assert store is not None
    word = "summary"
    expected = _expected(store, word)
    assert expected, "the sample store mentions the word"
    win = window.search_all.show()
    qtbot.addWidget(win)
    qtbot.keyClicks(win.box, word)
    qtbot.keyClick(win.box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "hits in" in win.status.text(), timeout=10_000)
    found = {(h.trace_id, h.sequence) for h in win.model.hits}
    assert expected <= found
    target = win.model.hits[-1]
    assert target.sequence is not None
    win.table.activated.emit(win.model.index(len(win.model.hits) - 1, 0))
    settle(qtbot, window)
    assert window.session.trace_id == target.trace_id
    assert window.detail.detail is not None
    assert window.detail.detail.message.sequence == target.sequence


def test_a_bad_filter_is_said_in_the_window(window: MainWindow, qtbot: Any) -> None:
    win = window.search_all.show()
    qtbot.addWidget(win)
    qtbot.keyClicks(win.box, "cost>lots")
    qtbot.keyClick(win.box, Qt.Key.Key_Return)
    assert "not a number" in win.status.text()
    assert win.model.rowCount() == 0
