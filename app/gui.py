"""Starting the window: QApplication, the qasync loop, error hooks, screenshot mode.

The window runs on Qt's event loop with asyncio on top (qasync), so coroutines and Qt
signals share one thread. Exceptions anywhere — a slot, an async slot, a task — reach
``sys.excepthook`` or the loop's exception handler, which log them and show the error
dialog instead of letting them vanish.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from core.errors import CtxlensError

log = logging.getLogger("ctxlens")

SCREENSHOT_SIZE = (1600, 1000)


@dataclass
class GuiOptions:
    db: str
    trace: str | None = None
    select: int | None = None
    screenshot: str | None = None
    settings: str | None = None
    timeout: float = 60.0
    build_store: bool = False
    """``db`` is the missing default store: show the window, then record the demo run into
    it in the background and open it when ready (``app/default_store.py``)."""
    problem: str | None = None
    """What went wrong before the window (a file that would not open): the window says it."""


def install_error_hooks(window: Any, loop: asyncio.AbstractEventLoop) -> None:
    """Route uncaught exceptions (sync slots, async slots, tasks) to the log and a dialog."""
    from ui.errors import show_error

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        window.last_error = show_error(window, exc.with_traceback(tb))

    def loop_handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if not isinstance(exc, BaseException):
            exc = RuntimeError(str(context.get("message", "asyncio error")))
        window.last_error = show_error(window, exc)

    sys.excepthook = excepthook
    loop.set_exception_handler(loop_handler)


def make_window(opts: GuiOptions) -> Any:
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from app.paths import app_icon
    from ui.main_window import MainWindow
    from ui.settings import AppSettings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("ctxlens")
    app.setOrganizationName("ctxlens")
    QApplication.setDesktopFileName("ctxlens")  # Wayland matches windows to ctxlens.desktop
    QApplication.setWindowIcon(QIcon(str(app_icon())))
    window = MainWindow(AppSettings(opts.settings), paint_first=True)  # the panes follow it
    if opts.problem is not None:
        problem = CtxlensError(opts.problem)
        window.when_ready(lambda: window.report_error(problem, "Cannot open the file"))
    if opts.screenshot:
        window.resize(*SCREENSHOT_SIZE)
    if opts.build_store:
        window.open_store_when_built(FIRST_START, lambda control: _build(opts.db, control))
        return app, window
    window.open_store(opts.db, opts.trace)
    if opts.select is not None:
        select = opts.select
        window.when_ready(lambda: window.timeline.select_sequence(select))
    return app, window


FIRST_START = "first start: recording the demo run into the default store"


def _build(db: str, control: Any) -> str:
    """The worker side of a first start: progress is the count of model calls."""
    from app.default_store import build_default_store

    report = lambda calls: control.report(f"{calls} model calls")  # noqa: E731
    return build_default_store(db, report, control.cancel)  # closing the window cancels


def launch(opts: GuiOptions) -> int:
    import qasync

    app, window = make_window(opts)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    install_error_hooks(window, loop)
    window.show()
    with loop:
        if opts.screenshot:
            code: int = loop.run_until_complete(
                screenshot(window, Path(opts.screenshot), opts.timeout)
            )
            return code
        closed = asyncio.Event()
        app.aboutToQuit.connect(closed.set)
        loop.run_until_complete(closed.wait())
    return 0


async def settled(window: Any, timeout: float) -> bool:  # noqa: ASYNC109 (polls Qt state)
    """Wait until the trace is shown and background work is done."""
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline:
        quiet = quiet + 1 if window.is_settled() else 0
        if quiet >= 3:  # settled across a few loop turns (follow-up tasks get started)
            return True
        await asyncio.sleep(0.03)
    return False


async def screenshot(window: Any, path: Path, timeout: float) -> int:  # noqa: ASYNC109
    if not await settled(window, timeout):
        log.error("the window did not settle within %.0f s", timeout)
    window.resize(*SCREENSHOT_SIZE)
    await asyncio.sleep(0.05)
    window.timeline.scroll_to_current()
    await asyncio.sleep(0.02)
    path.parent.mkdir(parents=True, exist_ok=True)
    ok = window.grab().save(str(path))
    shown = window.last_error
    window.close()
    if shown is not None:  # the dialog is not in the grab: say it, and fail the command
        log.error("the window reported an error: %s", shown.text())
        return 2
    return 0 if ok else 1
