"""The leak detector itself: each kind of leak is reported (then cleaned up by hand)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QRunnable, QThreadPool, QTimer
from PySide6.QtWidgets import QLabel

from tests.ui.leaks import LeakWatch, install, top_level_keys


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch, qapp: Any) -> LeakWatch:

    watch = LeakWatch(widgets_before=top_level_keys())
    install(watch, monkeypatch)
    return watch


def test_reports_an_unregistered_widget(probe: LeakWatch) -> None:
    label = QLabel("leaked")
    try:
        assert any("QLabel" in leak for leak in probe.leaks())
    finally:
        shiboken6.delete(label)
    assert probe.leaks() == []


def test_reports_an_active_timer(probe: LeakWatch) -> None:
    timer = QTimer()
    timer.start(10_000)
    try:
        assert any("QTimer" in leak for leak in probe.leaks())
    finally:
        timer.stop()
    assert probe.leaks() == []


def test_reports_a_busy_thread_pool(probe: LeakWatch) -> None:
    release = threading.Event()

    class Wait(QRunnable):
        def run(self) -> None:
            release.wait(5)

    pool = QThreadPool()
    pool.start(Wait())
    try:
        assert any("QThreadPool" in leak for leak in probe.leaks())
    finally:
        release.set()
        pool.waitForDone(5000)
    assert probe.leaks() == []


def test_reports_a_pending_asyncio_task(probe: LeakWatch) -> None:
    loop = asyncio.new_event_loop()
    probe.loops.append(loop)
    task = loop.create_task(asyncio.sleep(10))
    try:
        assert any("asyncio task" in leak for leak in probe.leaks())
    finally:
        task.cancel()
        loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        loop.close()
    assert probe.leaks() == []
