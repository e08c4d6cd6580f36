"""The app wiring: error hooks on the qasync loop, and the --screenshot entry point."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QObject
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMessageBox

from app.gui import GuiOptions, install_error_hooks, make_window
from tests.helpers.ctxlens_process import run
from tests.ui.conftest import close_loop, settle
from tests.ui.leaks import LeakWatch

ROOT = Path(__file__).resolve().parents[2]


class Boom(QObject):
    @qasync.asyncSlot()
    async def fail(self) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("boom in an async slot")


def test_exceptions_in_async_slots_reach_the_error_dialog(
    qtbot: Any, qapp: QApplication, sample_path: Path, tmp_path: Path, leak_watch: LeakWatch
) -> None:
    _app, window = make_window(GuiOptions(db=str(sample_path), settings=str(tmp_path / "s.ini")))
    qtbot.addWidget(window)
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    leak_watch.loops.append(loop)
    old_hook = sys.excepthook
    try:
        install_error_hooks(window, loop)
        boom = Boom()
        task = boom.fail()
        loop.run_until_complete(asyncio.wait([task]))
        qtbot.waitUntil(lambda: window.last_error is not None and window.last_error.isVisible())
        assert "boom in an async slot" in window.last_error.text()
        assert "RuntimeError" in window.last_error.detailedText()
        window.last_error.close()
        window.last_error = None

        loop.call_exception_handler({"message": "task failed", "exception": ValueError("loop")})
        assert isinstance(window.last_error, QMessageBox) and "loop" in window.last_error.text()
        window.last_error.close()
        settle(qtbot, window)
    finally:
        sys.excepthook = old_hook
        window.close()
        close_loop(loop)


def test_window_panes_are_filled_at_screenshot_size(
    qtbot: Any, sample_path: Path, tmp_path: Path
) -> None:
    _app, window = make_window(
        GuiOptions(db=str(sample_path), settings=str(tmp_path / "s.ini"), screenshot="x.png")
    )
    qtbot.addWidget(window)
    window.show()
    settle(qtbot, window)
    image = window.grab().toImage()
    assert (image.width(), image.height()) == (1600, 1000)
    for name, dock in window.docks.items():
        if dock.isVisible() and not dock.visibleRegion().isEmpty():
            pane = dock.widget().grab().toImage()
            assert pane.width() > 200 and pane.height() > 100, name
            assert _colors(pane) > 8, f"pane {name} looks empty"
    timeline = window.timeline.view.grab().toImage()
    assert timeline.width() > 500 and _colors(timeline) > 20


def _colors(image: QImage, step: int = 7) -> int:
    seen = set()
    for y in range(0, image.height(), step):
        for x in range(0, image.width(), step):
            seen.add(image.pixel(x, y))
    return len(seen)


@pytest.mark.slow
def test_screenshot_command_writes_the_png(tmp_path: Path) -> None:
    """``ctxlens gui --screenshot`` on the default store (created on first start)."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    env.pop("CTXLENS_DB", None)
    out = tmp_path / "shot.png"
    proc = run("gui", "--screenshot", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1600, 1000)
    assert (tmp_path / "data" / "ctxlens" / "ctxlens.db").exists()
    # each region of the window has content: left panes, timeline, right panes, bottom
    for x0, y0, x1, y1 in [(0, 60, 300, 900), (320, 80, 1050, 700), (1090, 60, 1600, 950)]:
        assert _colors(image.copy(x0, y0, x1 - x0, y1 - y0)) > 12, (x0, y0)


@pytest.mark.slow
def test_first_start_shows_the_window_before_the_demo_store_exists(
    qtbot: Any, tmp_path: Path
) -> None:
    """A missing default store: the window is up at once, the busy line counts the model
    calls being recorded, and the panes fill in with the demo trace when it is ready."""
    db = tmp_path / "data" / "ctxlens.db"
    _app, window = make_window(
        GuiOptions(db=str(db), settings=str(tmp_path / "s.ini"), build_store=True)
    )
    qtbot.addWidget(window)
    window.show()
    assert window.isVisible() and window.session.store is None and not window.is_settled()
    qtbot.waitUntil(lambda: "model calls" in window.busy_label.text(), timeout=60_000)
    assert "recording the demo run" in window.busy_label.text()
    qtbot.waitUntil(window.is_settled, timeout=120_000)
    assert db.exists() and not list(db.parent.glob("*.creating*"))
    assert window.timeline.source is not None and window.session.trace_id is not None
    assert "demo store is ready" in window.statusBar().currentMessage()


@pytest.mark.slow
def test_closing_the_window_mid_first_start_stops_the_demo_run(qtbot: Any, tmp_path: Path) -> None:
    db = tmp_path / "data" / "ctxlens.db"
    _app, window = make_window(
        GuiOptions(db=str(db), settings=str(tmp_path / "s.ini"), build_store=True)
    )
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "model calls" in window.busy_label.text(), timeout=60_000)
    window.close()  # runner.shutdown(): cancels, waits for the worker
    assert window.runner.pool.activeThreadCount() == 0, "the demo run stopped"
    assert not db.exists(), "no half-built store under the real name"
