"""The timeline keeps its place and the UI thread keeps running (issue 19 item 9, issue 20).

A live run's refresh inserts rows (no model reset): the selection and the scroll stay, and
a selected head is followed. Reads of a slow store run off the UI thread: each test's read
waits for a ``QTimer`` on the UI thread to let it go, so a read made on the UI thread would
wait in vain (the timer cannot fire) and the test fails.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer

from core.records import NewMessage
from core.store import Store
from core.store.reader import Reader
from tests.sample_trace import write_long_trace
from tests.ui.conftest import open_window, settle
from ui.main_window import MainWindow
from ui.replay import playback
from ui.settings import AppSettings
from ui.timeline.model import LOADING, RowRole


@pytest.fixture
def long_window(qtbot: Any, settings: AppSettings, tmp_path: Path) -> MainWindow:
    path = tmp_path / "long.db"
    with Store.open(path) as s:
        write_long_trace(s, 3_000, compact_every=1_000)
    win: MainWindow = open_window(qtbot, settings, path, (1280, 800))
    return win


def _append(win: MainWindow, n: int) -> None:
    store, trace_id = win.session.store, win.session.trace_id
    assert store is not None and trace_id is not None
    with store.write() as w:
        w.append(trace_id, [NewMessage("user", f"appended {i}", token_count=5) for i in range(n)])


def _counter(signal: Any) -> list[int]:
    seen: list[int] = []
    signal.connect(lambda *_a: seen.append(1))
    return seen


def test_a_live_refresh_inserts_rows_and_keeps_selection_and_scroll(
    long_window: MainWindow, qtbot: Any
) -> None:
    tl, win = long_window.timeline, long_window
    model = tl.model
    assert tl.select_sequence(1_500)
    bar = tl.view.verticalScrollBar()
    scroll = bar.value()
    assert 0 < scroll < bar.maximum()
    resets, inserts = _counter(model.modelReset), _counter(model.rowsInserted)
    before = model.length
    _append(win, 7)
    win.live.data_changed.emit()  # what the run controller says after a step wrote
    qtbot.waitUntil(lambda: model.length == before + 7, timeout=20_000)
    settle(qtbot, win)
    assert not resets, "a refresh of the same trace never resets the model"
    assert inserts, "the new messages were inserted"
    assert tl.selected_sequence() == 1_500
    assert bar.value() == scroll, "the view did not move"
    assert "3,007 messages" in tl.status.text()

    tl.select_view_row(model.rowCount() - 1)  # the head selected: the next refresh follows
    _append(win, 3)
    win.live.data_changed.emit()
    qtbot.waitUntil(lambda: model.length == before + 10, timeout=20_000)
    settle(qtbot, win)
    assert not resets
    last = model.path_row(model.length - 1)
    assert last is not None and tl.selected_sequence() == last.sequence


def _gated(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> tuple[threading.Event, list[bool], Callable[[], None]]:
    """``Reader.<name>`` waits for ``gate`` (at most 5 s) and records whether it was let go."""
    gate, released = threading.Event(), []
    original = getattr(Reader, name)

    def slow(self: Reader, *args: Any, **kw: Any) -> Any:
        released.append(gate.wait(timeout=5))
        return original(self, *args, **kw)

    monkeypatch.setattr(Reader, name, slow)
    return gate, released, lambda: QTimer.singleShot(30, gate.set)


def test_a_page_of_a_slow_store_loads_while_the_ui_thread_runs(
    long_window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tl = long_window.timeline
    gate, released, open_gate = _gated(monkeypatch, "main_path_previews")  # what a page reads
    ticks: list[int] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(5)
    open_gate()
    tl.view.verticalScrollBar().setValue(tl.view.verticalScrollBar().maximum() // 2)
    tl.view.viewport().repaint()
    row = tl.view.rowAt(tl.view.viewport().height() // 2)
    assert tl.model.index(row).data(RowRole) is LOADING, "a placeholder while the page loads"
    rect = tl.view.visualRect(tl.model.index(row))
    shot = tl.view.viewport().grab().toImage()
    y = rect.top() + (rect.height() - 1) // 2
    bar, gap = shot.pixelColor(rect.left() + 160, y), shot.pixelColor(rect.left() + 100, y)
    assert bar != gap, "the placeholder's preview bar is drawn (the gap before it is not)"
    qtbot.waitUntil(lambda: not tl.loading, timeout=20_000)
    timer.stop()
    assert released and all(released), "the read waited for the UI thread's timer"
    assert ticks, "the event loop kept running"
    record = tl.model.index(row).data(RowRole)
    assert record is not LOADING and record is not None
    assert gate.is_set()


def test_the_context_pane_labels_calls_off_the_ui_thread(
    window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pane = window.context
    count = pane.calls.count()
    assert count > 1, "the sample records calls"
    _gate, released, open_gate = _gated(monkeypatch, "llm_calls")
    open_gate()
    pane.reload()
    qtbot.waitUntil(lambda: bool(released) and pane.calls.count() == count, timeout=20_000)
    settle(qtbot, window)
    assert all(released), "llm_calls waited for the UI thread's timer"


def test_the_message_pane_reads_off_the_ui_thread(
    long_window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _gate, released, open_gate = _gated(monkeypatch, "message")
    open_gate()
    # a row on a page in memory (the head's): the pane is asked at once, timer pending
    assert long_window.timeline.select_sequence(2_990)
    qtbot.waitUntil(
        lambda: (
            long_window.detail.detail is not None
            and long_window.detail.detail.message.sequence == 2_990
        ),
        timeout=20_000,
    )
    assert released and all(released), "Reader.message waited for the UI thread's timer"


def test_a_long_trace_is_indexed_for_playback_when_asked(
    qtbot: Any, settings: AppSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(playback, "AUTO_INDEX_ROWS", 1_000)
    path = tmp_path / "long.db"
    with Store.open(path) as s:
        write_long_trace(s, 3_000, compact_every=1_000)
    win: MainWindow = open_window(qtbot, settings, path, (1280, 800))
    pb, bar = win.replay.playback, win.replay.bar
    assert pb.frames is None, "not indexed on load"
    assert "3,000 messages" in bar.label.text() and "Index its calls" in bar.label.text()
    assert not bar.slider.isEnabled()
    bar.label.linkActivated.emit("index")
    qtbot.waitUntil(lambda: pb.frames is not None, timeout=60_000)
    assert pb.frames is not None and len(pb.frames.stops) == 1_500  # one per assistant reply
    assert bar.slider.isEnabled() and bar.slider.maximum() == 1_499
    settle(qtbot, win)
