"""Run something once a widget has painted (issue 17: the window first; issue 20: the
trace's rows before the other panes).

An application event filter sees the first paint of the widget or of any widget inside it
(same window), removes itself and queues the callback, so the frame is finished before the
callback's work starts. A widget that is not visible (a window never shown: a test, a
script) gets its callback on the next loop turn; a shown one whose paint never comes (an
unmapped window) after ``fallback_ms``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, then: Callable[[], object], fallback_ms: int) -> None:
        super().__init__(widget)
        self.widget, self.then, self.done = widget, then, False
        QTimer.singleShot(0, self, self._unless_shown)
        QTimer.singleShot(fallback_ms, self, self.fire)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        painted = event.type() == QEvent.Type.Paint and isinstance(obj, QWidget)
        if painted and (obj is self.widget or self.widget.isAncestorOf(obj)):  # type: ignore[arg-type]
            QTimer.singleShot(0, self, self.fire)  # the frame completes first
        return False

    def _unless_shown(self) -> None:
        if not self.widget.isVisible():
            self.fire()

    def fire(self) -> None:
        if self.done:
            return
        self.done = True
        app = QCoreApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self.then()


def after_first_paint(widget: QWidget, then: Callable[[], object], fallback_ms: int = 1500) -> None:
    """Call ``then`` once, after ``widget``'s next painted frame (a window: its first)."""
    watcher = _FirstPaint(widget, then, fallback_ms)
    app = QCoreApplication.instance()
    if app is not None:
        app.installEventFilter(watcher)
