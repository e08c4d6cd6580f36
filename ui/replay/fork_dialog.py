"""Run → Edit message and continue…: change the selected message and continue the run
into a new trace (``core/replay/fork.py``), then compare the two.

The dialog shows the message's content in an editor and the ways this trace can go on
after the edit (``core/replay/fork.py:after_edit_choices``: a configured endpoint, the
demo's scripted model, stop — only those that differ for it, each saying what the new
trace then holds); "Continue" runs the fork off the UI thread (``run_rerun`` with the
fork's options) and reports progress; the result opens in the comparison view like any
re-run.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
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
from core.replay.endpoint import configured_endpoint
from core.replay.fork import AfterEdit, after_edit_choices, fork_options, no_model_note
from core.store import Store
from ui.close_keys import add_close_keys
from ui.tasks import TaskControl, TaskRunner
from ui.theme import set_accent
from ui.widgets import wrapped_label


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
        metadata = store.trace(trace_id).metadata
        self.endpoint = configured_endpoint(metadata)
        self.choices: dict[str, AfterEdit] = {}
        self.after = QComboBox()
        self.after.setObjectName("forkAfter")
        for i, choice in enumerate(after_edit_choices(metadata, self.endpoint)):
            self.choices[choice.key] = choice
            self.after.addItem(f"After the edit: {choice.label}", choice.key)
            self.after.setItemData(i, choice.detail, Qt.ItemDataRole.ToolTipRole)
        self.after.currentIndexChanged.connect(self._after_tip)
        self._after_tip()
        self.no_model = wrapped_label(no_model_note(tuple(self.choices.values())))
        self.no_model.setObjectName("forkNoModel")
        self.no_model.setVisible(bool(self.no_model.text()))
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
        parts = (intro, self.editor, self.after, self.no_model, self.status, self.error)
        for w in (*parts, self.buttons):
            layout.addWidget(w)
        add_close_keys(self, self.reject, escape=False)
        self.resize(720, 520)

    def _after_tip(self) -> None:
        choice = self.choices.get(self.after.currentData())
        self.after.setToolTip(choice.detail if choice is not None else "")

    def run(self) -> int | None:
        if self.job is not None:
            return None
        content, choice = self.editor.toPlainText(), self.choices[self.after.currentData()]
        if content == self.message.content:
            self.error.setText("The content is unchanged: edit it first.")
            return None
        store, trace_id, seq = self.store, self.trace_id, self.message.sequence
        self.error.setText("")
        self.status.setText("Forking…")
        self.run_button.setEnabled(False)

        endpoint = self.endpoint if choice.key == "endpoint" else None
        on_diverge = choice.on_diverge

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
