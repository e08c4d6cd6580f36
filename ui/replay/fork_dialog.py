"""Run → Edit message and continue…: change the selected message and continue the run
into a new trace (``core/replay/fork.py``), then compare the two.

The dialog shows the message's content in an editor; "Continue" runs the fork off the UI
thread (``run_rerun`` with the fork's options) and reports progress; the result opens in
the comparison view like any re-run.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from core.inspector.rerun import RerunOutcome, RerunProgress, run_rerun
from core.records import Message
from core.replay.endpoint import configured_endpoint, describe
from core.replay.fork import OnDiverge, fork_options
from core.store import Store
from ui.close_keys import add_close_keys
from ui.tasks import TaskControl, TaskRunner
from ui.theme import set_accent
from ui.widgets import wrapped_label

AFTER_EDIT = (
    ("auto", "the demo's scripted model (stop for other traces)"),
    ("live", "the demo's scripted model"),
    ("stop", "stop: keep only the edited prefix"),
)
ENDPOINT = "endpoint"
"""The choice "the configured model": offered (first) when an endpoint is configured."""


class ForkDialog(QDialog):
    finished_run = Signal(object)
    """A ``RerunOutcome``: the fork finished."""

    def __init__(
        self, store: Store, runner: TaskRunner, trace_id: str, message: Message,
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("forkDialog")
        self.setWindowTitle("Edit message and continue")
        self.store, self.runner, self.trace_id, self.message = store, runner, trace_id, message
        self.job: int | None = None
        intro = wrapped_label(
            f"Message #{message.sequence} ({message.role}, {message.token_count:,} tokens). "
            "Edit it and continue into a new trace: the messages before it are copied, the "
            "run goes on from the first model call that received it. The original trace is "
            "not changed."
        )
        self.editor = QPlainTextEdit(message.content)
        self.editor.setObjectName("forkEditor")
        self.endpoint = configured_endpoint(store.trace(trace_id).metadata)
        self.after = QComboBox()
        self.after.setObjectName("forkAfter")
        if self.endpoint is not None:
            self.after.addItem(f"After the edit: the configured {describe(self.endpoint)}",
                               ENDPOINT)  # fmt: skip
        for value, label in AFTER_EDIT:
            self.after.addItem(f"After the edit: {label}", value)
        self.status = wrapped_label()
        self.error = wrapped_label()
        set_accent(self.error, "error")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.run_button = self.buttons.addButton(
            "Continue into a new trace", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.run_button.setObjectName("forkRun")
        self.run_button.clicked.connect(self.run)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (intro, self.editor, self.after, self.status, self.error, self.buttons):
            layout.addWidget(w)
        add_close_keys(self, self.reject, escape=False)
        self.resize(720, 520)

    def run(self) -> int | None:
        if self.job is not None:
            return None
        content, mode = self.editor.toPlainText(), self.after.currentData()
        if content == self.message.content:
            self.error.setText("The content is unchanged: edit it first.")
            return None
        store, trace_id, seq = self.store, self.trace_id, self.message.sequence
        self.error.setText("")
        self.status.setText("Forking…")
        self.run_button.setEnabled(False)

        endpoint = self.endpoint if mode == ENDPOINT else None
        on_diverge: OnDiverge = "live" if endpoint is not None else mode

        def task(c: TaskControl) -> RerunOutcome:
            source, opts = fork_options(
                store, trace_id, seq, content, on_diverge=on_diverge, endpoint=endpoint
            )
            return run_rerun(store, source, opts, c.cancel, c.report)

        self.job = self.runner.submit(
            f"fork {trace_id} at #{seq}", task, self._done, on_error=self._failed,
            on_progress=self._progress, drain=True,
        )  # fmt: skip
        return self.job

    def _progress(self, p: object) -> None:
        if isinstance(p, RerunProgress):
            self.status.setText(f"{p.calls:,} model calls after the edit…")

    def _done(self, outcome: RerunOutcome) -> None:
        self.job = None
        self.run_button.setEnabled(True)
        self.status.setText(outcome.headline())
        self.finished_run.emit(outcome)

    def _failed(self, exc: BaseException) -> None:
        self.job = None
        self.run_button.setEnabled(True)
        self.status.setText("")
        self.error.setText(str(exc))

    def done(self, result: int) -> None:
        """Closing stops a running fork (the partial trace stays)."""
        if self.job is not None:
            self.runner.stop(self.job)
        super().done(result)
