"""Run something once a window has painted its first frame (issue 17: the window first).

An application event filter sees the first paint of any widget of the window, removes
itself and queues the callback, so the frame is finished before the callback's work
starts. A window that is never shown (a test, a script) gets its callback on the next
loop turn; a shown one whose paint never comes (an unmapped window) after ``fallback_ms``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class _FirstPaint(QObject):
    def __init__(self, window: QWidget, then: Callable[[], object], fallback_ms: int) -> None:
        super().__init__(window)
        self.window, self.then, self.done = window, then, False
        QTimer.singleShot(0, self, self._unless_shown)
        QTimer.singleShot(fallback_ms, self, self.fire)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        painted = event.type() == QEvent.Type.Paint and isinstance(obj, QWidget)
        if painted and obj.window() is self.window:  # type: ignore[attr-defined]
            QTimer.singleShot(0, self, self.fire)  # the frame completes first
        return False

    def _unless_shown(self) -> None:
        if not self.window.isVisible():
            self.fire()

    def fire(self) -> None:
        if self.done:
            return
        self.done = True
        app = QCoreApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self.then()


def after_first_paint(window: QWidget, then: Callable[[], object], fallback_ms: int = 1500) -> None:
    """Call ``then`` once, after ``window``'s first painted frame."""
    watcher = _FirstPaint(window, then, fallback_ms)
    app = QCoreApplication.instance()
    if app is not None:
        app.installEventFilter(watcher)
