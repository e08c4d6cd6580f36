"""Leak detection for Qt tests: widgets, timers, thread pools, threads and asyncio tasks.

Modelled on napari's conftest: QTimer/QThread/QThreadPool starts are recorded during a test
and checked at its end; top-level widgets must be registered with ``qtbot.addWidget``.
Each check is a plain function so the detector itself is tested (tests/ui/test_leaks.py).
"""

from __future__ import annotations

import asyncio
import traceback
import weakref
from dataclasses import dataclass, field

import shiboken6
from PySide6.QtCore import QThread, QThreadPool, QTimer
from PySide6.QtWidgets import QApplication, QWidget


def _where() -> str:
    frames = [f for f in traceback.extract_stack()[:-2] if "/site-packages/" not in f.filename]
    return " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in frames[-3:])


def widget_key(w: QWidget) -> int:
    """A widget's C++ address. Not ``id()``: a widget Qt made (a popup, a tool window) gets
    a new Python wrapper each time ``topLevelWidgets`` lists it, whose id is freed at once
    and may be the id of a widget made later, which then passed for one from before (the
    detector's own test failed so, depending on the order tests ran in)."""
    return int(shiboken6.getCppPointer(w)[0])


def top_level_keys() -> set[int]:
    """``widget_key`` of every top-level widget now (``LeakWatch.widgets_before``)."""
    return {widget_key(w) for w in QApplication.topLevelWidgets()}


@dataclass
class LeakWatch:
    """What a test started; ``leaks()`` names what is still alive."""

    widgets_before: set[int] = field(default_factory=set)
    """The C++ addresses of the top-level widgets before the test (``widget_key``)."""
    handled: weakref.WeakSet[QWidget] = field(default_factory=weakref.WeakSet)
    timers: list[tuple[weakref.ref[QTimer], str]] = field(default_factory=list)
    pools: list[tuple[QThreadPool, str]] = field(default_factory=list)
    threads: list[tuple[QThread, str]] = field(default_factory=list)
    loops: list[asyncio.AbstractEventLoop] = field(default_factory=list)

    def leaked_widgets(self) -> list[QWidget]:
        out = []
        for w in QApplication.topLevelWidgets():
            if (
                w.parent() is None
                and widget_key(w) not in self.widgets_before
                and w not in self.handled
            ):
                out.append(w)
        return out

    def leaks(self) -> list[str]:
        found = [f"widget {type(w).__name__} {w.objectName()!r}" for w in self.leaked_widgets()]
        found += [f"active QTimer started at {at}" for ref, at in self.timers if _active(ref)]
        for pool, at in self.pools:
            if _busy(pool):
                found.append(f"QThreadPool still running work started at {at}")
        found += [f"running QThread started at {at}" for t, at in self.threads if _running(t)]
        for loop in self.loops:
            if not loop.is_closed():
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                found += [f"pending asyncio task {t.get_coro()!r}" for t in pending]
        return found


def _active(ref: weakref.ref[QTimer]) -> bool:
    timer = ref()
    try:
        return timer is not None and timer.isActive()
    except RuntimeError:  # C++ object already deleted
        return False


def _busy(pool: QThreadPool) -> bool:
    try:
        return not pool.waitForDone(50) or pool.activeThreadCount() > 0
    except RuntimeError:  # deleted: a QThreadPool's destructor waits for its threads
        return False


def _running(thread: QThread) -> bool:
    try:
        return thread.isRunning()
    except RuntimeError:
        return False


def install(watch: LeakWatch, monkeypatch: object) -> None:
    """Record QTimer/QThreadPool/QThread starts into ``watch`` for the test's duration."""
    mp = monkeypatch
    timer_start = QTimer.start
    pool_start = QThreadPool.start
    thread_start = QThread.start

    def start_timer(self: QTimer, *args: object) -> None:
        watch.timers.append((weakref.ref(self), _where()))
        timer_start(self, *args)  # type: ignore[call-overload]

    def start_pool(self: QThreadPool, *args: object) -> None:
        watch.pools.append((self, _where()))
        pool_start(self, *args)  # type: ignore[call-overload]

    def start_thread(self: QThread, *args: object) -> None:
        watch.threads.append((self, _where()))
        thread_start(self, *args)  # type: ignore[call-overload]

    mp.setattr(QTimer, "start", start_timer)  # type: ignore[attr-defined]
    mp.setattr(QThreadPool, "start", start_pool)  # type: ignore[attr-defined]
    mp.setattr(QThread, "start", start_thread)  # type: ignore[attr-defined]
