"""UI-6 Run, Pause, Step and Stop on the real window, driving the real runtime: a demo trace
whose scripted model is served on 127.0.0.1, on a real store file, on the qasync loop."""

from __future__ import annotations

import asyncio
import itertools
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from app.gui import settled
from core.demo.scenario import DemoOptions
from core.records import NewMessage
from core.run.config import RunConfig
from core.run.events import RunEvent
from core.run.state import Phase
from core.store import Store
from tests.ui.conftest import settle
from ui.dialogs.new_demo import NewDemoDialog
from ui.main_window import MainWindow
from ui.run_controller import FINISHED_TIP

Run = Callable[[Callable[[], Any]], Any]


def _server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ctxlens-model-server"]


def _drive(loop: qasync.QEventLoop, win: MainWindow, scenario: Callable[[], Any]) -> None:
    """Run ``scenario`` on the loop, then close the live run (even when it failed)."""

    async def wrapped() -> None:
        try:
            await scenario()
        finally:
            await win.live.aclose()

    loop.run_until_complete(wrapped())


async def _settle(win: MainWindow) -> None:
    assert await settled(win, 30), "the window did not settle"


async def _until(check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def _open_new_demo(win: MainWindow) -> NewDemoDialog:
    """Run → New demo run…, as the user opens it: the dialog, once it shows."""
    win.registry["run.new_demo"].trigger()
    dialog = win.demo_dialog
    assert isinstance(dialog, NewDemoDialog)
    await _until(dialog.isVisible)
    return dialog


def _path(win: MainWindow) -> list[int]:
    store, trace_id = win.session.store, win.session.trace_id
    assert store is not None and trace_id is not None
    with store.read() as r:
        return r.main_path_sequences(trace_id)


async def _new_demo(win: MainWindow, opts: DemoOptions) -> str:
    trace_id = win.new_demo_run(opts)
    assert trace_id is not None
    await _settle(win)
    return trace_id


async def _step(win: MainWindow) -> None:
    action = win.registry["run.step"]
    assert action.isEnabled(), action.toolTip()
    action.trigger()
    assert not win.live.idle, "the step runs on the loop, not inside the click"
    assert not win.registry["run.step"].isEnabled()
    await _settle(win)


def _port(win: MainWindow) -> int:
    runner = win.live.runner
    assert runner is not None
    port = urlparse(runner.model.settings.base_url).port  # type: ignore[attr-defined]
    assert port is not None
    return port


def _closed(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.connect(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_traces_that_cannot_run_say_why(
    window: MainWindow, sample_path: Path, monkeypatch: pytest.MonkeyPatch, qtbot: Any
) -> None:
    reg = window.registry
    assert not reg["run.run"].isEnabled() and not reg["run.step"].isEnabled()
    assert "Sample traces cannot be run" in reg["run.step"].toolTip()
    assert window.run_label.text() == "Run: sample traces cannot run · New demo run: Ctrl+Shift+N"
    assert not reg["run.pause"].isEnabled() and not reg["run.stop"].isEnabled()

    store = window.session.store
    assert store is not None
    config = RunConfig(model="m1").to_json()
    trace = store.create_trace("ran before", metadata={"run_config": config})
    store.append(trace.id, [NewMessage("user", "go on")])
    monkeypatch.delenv("CTXLENS_BASE_URL", raising=False)
    window.traces.reload()
    window.open_trace(trace.id)
    assert not reg["run.step"].isEnabled()
    assert "CTXLENS_BASE_URL" in reg["run.step"].toolTip() and "'m1'" in reg["run.step"].toolTip()
    assert window.run_label.text() == "Run: no model endpoint configured (CTXLENS_BASE_URL)"

    monkeypatch.setenv("CTXLENS_BASE_URL", "http://127.0.0.1:9/v1")
    window.open_trace(trace.id)
    settle(qtbot, window)  # the phase of a trace opened is read off the UI thread
    assert reg["run.step"].isEnabled() and reg["run.run"].isEnabled()
    assert "model m1 at http://127.0.0.1:9/v1" in reg["run.step"].toolTip()
    assert window.run_label.text() == "Step: before preparing the next context"


def test_new_demo_run_then_step_adds_rows_and_moves_the_phase(
    window: MainWindow, qloop: qasync.QEventLoop, qtbot: Any
) -> None:
    async def scenario() -> None:
        dialog = await _open_new_demo(window)
        dialog.mode.setCurrentIndex(dialog.mode.findData("naive"))
        dialog.steps.setValue(30)
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
        await _settle(window)
        trace = window.session.trace()
        assert trace is not None and trace.metadata["demo"]["compaction"] == "naive"
        assert trace.metadata["demo"]["steps"] == 30
        assert trace.id in [t.id for t in window.traces.model.records], "listed in the browser"
        assert window.run_label.text() == "Step: before preparing the next context"
        assert window.timeline.model.length == len(_path(window)) == 2  # system + task

        rows, labels = [window.timeline.model.length], [window.run_label.text()]
        for _ in range(12):
            await _step(window)
            path = _path(window)
            assert window.timeline.model.length == len(path), "the timeline shows the store"
            assert window.timeline.selected_sequence() == path[-1], "the view follows the head"
            rows.append(window.timeline.model.length)
            labels.append(window.run_label.text())
        assert rows == sorted(rows) and rows[-1] > rows[0] + 4, rows
        assert all(a != b for a, b in itertools.pairwise(labels)), labels
        assert any(t.startswith("Step: before tool ") for t in labels), labels
        assert "Step: before model call 1" in labels
        assert window.live.is_open and _server_threads()
        port = _port(window)
        await window.live.aclose()
        assert not window.live.is_open and not _server_threads() and _closed(port)

    _drive(qloop, window, scenario)


def test_run_pauses_from_a_signal_and_rows_stop_growing(
    window: MainWindow, qloop: qasync.QEventLoop
) -> None:
    results: list[RunEvent] = []

    def on_event(event: RunEvent) -> None:
        if event.type == "tool_result":
            results.append(event)
            if len(results) == 3:
                window.registry["run.pause"].trigger()

    async def scenario() -> None:
        await _new_demo(window, DemoOptions())
        window.live.run_event.connect(on_event)
        reg = window.registry
        reg["run.run"].trigger()
        assert window.live.running or window.live.busy == "opening"
        assert reg["run.pause"].isEnabled() and reg["run.stop"].isEnabled()
        for name in ("run.run", "run.step", "run.rewind", "run.compact"):
            assert not reg[name].isEnabled(), name
        await _settle(window)
        assert window.live.last_stop == "paused" and len(results) == 3
        rows = len(_path(window))
        assert window.timeline.model.length == rows
        await asyncio.sleep(0.3)
        assert len(_path(window)) == rows and len(results) == 3, "nothing runs after a pause"
        assert window.run_label.text().startswith("Paused · Step: ")
        assert reg["run.run"].isEnabled() and not reg["run.pause"].isEnabled()
        window.live.run_event.disconnect(on_event)

    _drive(qloop, window, scenario)


def test_run_to_the_end_disables_run(window: MainWindow, qloop: qasync.QEventLoop) -> None:
    async def scenario() -> None:
        trace_id = await _new_demo(window, DemoOptions(steps=12))
        window.registry["run.run"].trigger()
        await _settle(window)
        assert window.live.phase is Phase.DONE and window.live.last_stop == "done"
        for name in ("run.run", "run.step", "run.pause", "run.stop"):
            assert not window.registry[name].isEnabled(), name
        assert window.registry["run.run"].toolTip() == FINISHED_TIP
        assert window.run_label.text() == "Run: the turn is finished"
        store = window.session.store
        assert store is not None
        with store.read() as r:
            last = r.message(trace_id, r.trace(trace_id).head)
            llm_calls = len(r.llm_calls(trace_id))
        assert last.role == "assistant" and not last.tool_calls and last.content
        assert llm_calls == 12, "the demo's limit of model calls"
        row = next(t for t in window.traces.model.records if t.id == trace_id)
        assert row.messages == store.trace(trace_id).messages, "the browser's count is fresh"
        window.registry["run.step"].trigger()  # disabled: nothing happens
        assert window.live.idle

    _drive(qloop, window, scenario)


def test_rewind_is_refused_mid_run_and_step_continues_from_the_new_head(
    window: MainWindow, qloop: qasync.QEventLoop, qtbot: Any
) -> None:
    async def scenario() -> None:
        trace_id = await _new_demo(window, DemoOptions())
        results: list[RunEvent] = []

        def pause_after(n: int) -> Callable[[RunEvent], None]:
            def on_event(event: RunEvent) -> None:
                if event.type == "tool_result":
                    results.append(event)
                    if len(results) == n:
                        window.live.pause()

            return on_event

        window.live.run_event.connect(pause_after(8))
        window.registry["run.run"].trigger()
        await _settle(window)
        before = _path(window)
        store = window.session.store
        assert store is not None
        target = _single_call_result(store, trace_id, before[: len(before) // 2])

        # while running: the rewind is refused and the head does not move
        window.live.run_event.disconnect()
        window.live.run_event.connect(pause_after(len(results) + 2))
        window.registry["run.run"].trigger()
        window.rewind_to(target)
        assert "Cannot rewind while the run is busy" in window.statusBar().currentMessage()
        await _settle(window)
        window.live.run_event.disconnect()
        before = _path(window)
        assert target in before and before[-1] != target

        assert window.timeline.select_sequence(target)
        window.registry["run.rewind"].trigger()
        box = window.confirm_box
        assert isinstance(box, QMessageBox)
        await _until(box.isVisible)
        box.button(QMessageBox.StandardButton.Yes).click()
        await _settle(window)
        assert not window.live.is_open, "the runner follows the new head: reopened on Step"
        assert window.run_label.text() == "Step: after the round's tools: bookkeeping next"
        for _ in range(4):
            await _step(window)
        after = _path(window)
        cut = before.index(target) + 1
        assert after[:cut] == before[:cut], "the path up to the new head is kept"
        assert len(after) > cut and min(after[cut:]) > max(before), "new messages follow it"
        assert window.timeline.model.length == len(after)

    _drive(qloop, window, scenario)


def _single_call_result(store: Store, trace_id: str, path: list[int]) -> int:
    """A tool result on ``path`` whose round had one call (its bookkeeping comes next)."""
    with store.read() as r:
        msgs = [r.message(trace_id, s) for s in path]
    by_call = {c.id: m for m in msgs for c in m.tool_calls}
    for m in reversed(msgs):
        call = by_call.get(m.tool_call_id or "") if m.role == "tool" else None
        if call is not None and len(call.tool_calls) == 1:
            return m.sequence
    raise AssertionError("no single-call round on the path")


def test_stop_drops_the_runner_and_the_next_step_opens_a_fresh_one(
    window: MainWindow, qloop: qasync.QEventLoop
) -> None:
    async def scenario() -> None:
        await _new_demo(window, DemoOptions())
        await _step(window)
        rows = len(_path(window))
        window.registry["run.run"].trigger()
        assert window.registry["run.stop"].isEnabled()
        window.registry["run.stop"].trigger()
        await _settle(window)
        assert not window.live.is_open, "a cancelled runner is not reused"
        stopped = len(_path(window))
        assert stopped - rows <= 2, "stopped within the step that was in flight"
        for _ in range(3):
            await _step(window)
        assert window.live.is_open and len(_path(window)) > stopped

    _drive(qloop, window, scenario)


def test_opening_another_trace_mid_run_stops_and_closes_the_runner(
    window: MainWindow, qloop: qasync.QEventLoop, sample_trace: Any
) -> None:
    async def scenario() -> None:
        trace_id = await _new_demo(window, DemoOptions())
        store = window.session.store
        assert store is not None
        window.registry["run.run"].trigger()
        await _until(lambda: store.trace(trace_id).messages > 20)
        window.open_trace(sample_trace.id)
        await _settle(window)
        assert window.live.idle and not window.live.is_open and not _server_threads()
        stopped = store.trace(trace_id).messages
        await asyncio.sleep(0.3)
        assert store.trace(trace_id).messages == stopped, "nothing runs in the background"
        assert window.session.trace_id == sample_trace.id
        assert not window.registry["run.run"].isEnabled(), "the sample cannot run"

    _drive(qloop, window, scenario)


def test_an_error_opening_the_run_reaches_the_error_dialog(
    window: MainWindow, qloop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch, qtbot: Any
) -> None:
    store = window.session.store
    assert store is not None
    trace = store.create_trace("ran before", metadata={"run_config": RunConfig().to_json()})
    store.append(trace.id, [NewMessage("user", "go on")])
    monkeypatch.setenv("CTXLENS_BASE_URL", "http://127.0.0.1:9/v1")
    window.traces.reload()
    window.open_trace(trace.id)
    settle(qtbot, window)  # the phase of a trace opened is read off the UI thread
    assert window.registry["run.step"].isEnabled()
    monkeypatch.delenv("CTXLENS_BASE_URL")  # the endpoint went away since

    async def scenario() -> None:
        window.registry["run.step"].trigger()
        await _settle(window)
        box = window.last_error
        assert isinstance(box, QMessageBox) and "CTXLENS_BASE_URL" in box.text()
        assert window.live.idle and not window.live.is_open
        box.close()

    _drive(qloop, window, scenario)


def test_closing_the_window_closes_the_live_run_first(
    window: MainWindow, qloop: qasync.QEventLoop, qapp: QApplication
) -> None:
    quits = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)

    async def scenario() -> None:
        await _new_demo(window, DemoOptions())
        await _step(window)
        port = _port(window)
        assert window.live.is_open and not _closed(port)
        window.close()
        await _until(lambda: not window.isVisible())
        assert not window.live.is_open and not _server_threads() and _closed(port)

    try:
        _drive(qloop, window, scenario)
    finally:
        qapp.setQuitOnLastWindowClosed(quits)
