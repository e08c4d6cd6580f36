"""The status bar's line about background work: what runs (the task runner's labels),
how far it is, and a button that cancels it."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QToolButton

from ui.tasks import TaskRunner


def progress_text(label: str, value: object) -> str | None:
    """``Working: label (…)`` for a task's progress: a share, a count or a phrase."""
    if isinstance(value, tuple) and len(value) == 2 and value[1]:
        return f"Working: {label} ({100 * value[0] // value[1]} %)"
    if isinstance(value, int):
        return f"Working: {label} ({value:,} items)"
    if isinstance(value, str):
        return f"Working: {label} ({value})"
    return None


class BusyLine:
    def __init__(self, runner: TaskRunner, cancel: QAction, status: QStatusBar) -> None:
        self.runner = runner
        self.label = QLabel("")
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)
        self.bar.setMaximumWidth(120)
        self.bar.setVisible(False)
        self.cancel = QToolButton()
        self.cancel.setDefaultAction(cancel)
        self.cancel.setVisible(False)
        for widget in (self.label, self.bar, self.cancel):
            status.addPermanentWidget(widget)
        runner.busy_changed.connect(self._busy)
        runner.progress.connect(self._progress)

    def _busy(self, busy: bool) -> None:
        self.bar.setVisible(busy)
        self.cancel.setVisible(busy)
        self.label.setText("Working: " + ", ".join(self.runner.labels()) if busy else "")

    def _progress(self, label: str, value: object) -> None:
        text = progress_text(label, value)
        if text is not None:
            self.label.setText(text)
