"""Run → Re-run with… (issue 9, part 2): re-run a stored trace offline under other settings.

The form edits the start call and a few run settings (``core/inspector/rerun.py``), shows
the equivalent ``ctxlens replay`` command, and runs the replay on the task runner in its
own event loop (``run_rerun``) with progress (calls replayed) and Cancel — a *drain* task,
so a cancelled run still reports the partial trace it wrote. Opened with ``open()``.
"""

from __future__ import annotations

from html import escape as _esc
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.errors import CtxlensError
from core.inspector.rerun import (
    ON_DIVERGE,
    ON_DIVERGE_HELP,
    RERUN_SETTINGS,
    RerunOutcome,
    RerunProgress,
    Setting,
    StartCall,
    command_line,
    defaults,
    run_rerun,
    settings_pairs,
    start_calls,
)
from core.records import Trace
from core.replay.rerun import ReplayOptions
from core.store import Store
from ui.close_keys import add_close_keys
from ui.tasks import TaskControl, TaskRunner, reading
from ui.theme import accent_note
from ui.widgets import wrapped_label

Editor = QSpinBox | QDoubleSpinBox | QComboBox


class RerunDialog(QDialog):
    starts_loaded = Signal()
    finished_run = Signal(object)
    """A ``RerunOutcome``: the replay finished or was cancelled."""
    failed = Signal(object)

    def __init__(
        self, store: Store, runner: TaskRunner, trace: Trace, start: int = 0,
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("rerunDialog")
        self.setWindowTitle("Re-run with…")
        self.store, self.runner, self.trace = store, runner, trace
        self.base = defaults(trace.metadata)
        self.job: int | None = None
        self.outcome: RerunOutcome | None = None
        self.editors: dict[str, Editor] = {}
        self._build(start)
        add_close_keys(self, self.reject, escape=False)
        self._changed()
        self.resize(640, 0)

    # -- layout ---------------------------------------------------------------------------
    def _build(self, start: int) -> None:
        intro = wrapped_label(
            f"Re-run <b>{_esc(self.trace.title or self.trace.id)}</b> offline: every model call "
            "is answered with the reply recorded in this trace, so nothing is paid for again. "
            "The result is a new trace; the comparison opens when it is done."
        )
        self.start = QComboBox()
        self.start.setObjectName("rerunStart")
        self.start.addItem(f"call {start} (listing the calls…)", start)
        self._load_starts(start)
        self.start.setToolTip(
            "Copy the trace up to this call, then replay from it under the new settings "
            "(a main-agent call of the current run)"
        )
        form = self.form = QFormLayout()
        form.addRow("Start at", self.start)
        for s in RERUN_SETTINGS:
            editor = _editor(s, self.base[s.key])
            editor.setObjectName(f"rerun_{s.key}")
            editor.setToolTip(s.help)
            self.editors[s.key] = editor
            form.addRow(s.label, editor)
        self.extra = QLineEdit()
        self.extra.setObjectName("rerunExtra")
        self.extra.setPlaceholderText("key=value … (any run setting, e.g. max_steps=90)")
        self.extra.setToolTip("More run settings, as ctxlens replay --set takes them")
        form.addRow("More settings", self.extra)
        self.on_diverge = QComboBox()
        self.on_diverge.setObjectName("rerunOnDiverge")
        for mode in ON_DIVERGE:
            self.on_diverge.addItem(f"{mode} — {ON_DIVERGE_HELP[mode]}", mode)
        form.addRow("On divergence", self.on_diverge)
        self.command = wrapped_label(name="rerunCommand")
        self.command.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setObjectName("rerunProgress")
        self.progress.setVisible(False)
        self.status = wrapped_label(name="rerunStatus")
        self.error = accent_note("rerunError", "error")
        self.buttons = QDialogButtonBox()
        self.run_button = self.buttons.addButton("Re-run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.run_button.setObjectName("rerunButton")
        self.stop_button = self.buttons.addButton("Stop", QDialogButtonBox.ButtonRole.ActionRole)
        self.stop_button.setObjectName("rerunStop")
        self.stop_button.setToolTip("Stop the replay; the calls replayed so far stay as a trace")
        self.stop_button.setEnabled(False)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.run_button.clicked.connect(self.run)
        self.stop_button.clicked.connect(self.cancel_run)
        self.close_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.command)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self.start.currentIndexChanged.connect(self._changed)
        self.on_diverge.currentIndexChanged.connect(self._changed)
        self.extra.textChanged.connect(self._changed)
        for editor in self.editors.values():
            signal = (
                editor.currentIndexChanged if isinstance(editor, QComboBox) else editor.valueChanged
            )
            signal.connect(self._changed)

    def _load_starts(self, start: int) -> None:
        """The calls to start from (a long imported trace derives them from its path: off
        the UI thread)."""
        self.runner.submit(
            "list calls to re-run from",
            reading(self.store, start_calls, self.trace.id),
            self._starts,
            key="rerun-starts",
        )

    def _starts(self, calls: list[StartCall]) -> None:
        wanted = self.start.currentData()
        with QSignalBlocker(self.start):
            self.start.clear()
            for c in calls:
                self.start.addItem(c.label, c.position)
            self.start.setCurrentIndex(max(0, self.start.findData(wanted)))
        self.starts_loaded.emit()
        self._changed()

    # -- options --------------------------------------------------------------------------
    def chosen(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, editor in self.editors.items():
            out[key] = editor.currentData() if isinstance(editor, QComboBox) else editor.value()
        return out

    def options(self) -> ReplayOptions:
        """The replay as chosen (raises ``InvalidInputError`` for a bad extra setting)."""
        pairs = settings_pairs(self.base, self.chosen(), self.extra.text())
        return ReplayOptions(
            from_call=int(self.start.currentData() or 0),
            settings=pairs,
            on_diverge=self.on_diverge.currentData(),
        )

    def _changed(self) -> None:
        try:
            opts = self.options()
        except CtxlensError as exc:
            self.command.setText("")
            self._show_error(str(exc))
            self.run_button.setEnabled(False)
            return
        self.error.setVisible(False)
        self.run_button.setEnabled(self.job is None)
        self._mark_changed()
        what = ", ".join(opts.settings) if opts.settings else "the trace's own settings"
        self.command.setText(
            f"Settings: <b>{_esc(what)}</b><br><code>{_esc(command_line(self.trace.id, opts))}"
            "</code>"
        )

    def _mark_changed(self) -> None:
        """Settings that differ from the source's have a bold label."""
        chosen = self.chosen()
        for key, editor in self.editors.items():
            label = self.form.labelForField(editor)
            if isinstance(label, QLabel):
                font = label.font()
                font.setBold(chosen[key] != self.base[key])
                label.setFont(font)

    # -- running --------------------------------------------------------------------------
    def run(self) -> None:
        if self.job is not None:
            return
        try:
            opts = self.options()
        except CtxlensError as exc:
            self._show_error(str(exc))
            return
        store, trace_id = self.store, self.trace.id
        self._busy(True)
        self.status.setText("Starting the replay…")

        def task(c: TaskControl) -> RerunOutcome:
            return run_rerun(store, trace_id, opts, c.cancel, c.report)

        self.job = self.runner.submit(
            f"re-run {trace_id}",
            task,
            self._done,
            on_error=self._failed,
            on_progress=self._progress,
            drain=True,
        )

    def cancel_run(self) -> None:
        if self.job is not None:
            self.status.setText("Stopping…")
            self.runner.stop(self.job)

    def _progress(self, p: object) -> None:
        if not isinstance(p, RerunProgress):
            return
        self.progress.setRange(0, max(p.expected, p.calls, 1))
        self.progress.setValue(p.calls)
        self.progress.setFormat(f"{p.calls:,} calls replayed")
        self.status.setText(
            f"{p.calls:,} calls replayed (the source made {p.expected:,} from the start call) · "
            f"{p.compactions:,} compactions so far"
        )

    def _done(self, outcome: RerunOutcome) -> None:
        self.job = None
        self.outcome = outcome
        self._busy(False)
        self.status.setText(outcome.headline())
        self.finished_run.emit(outcome)

    def _failed(self, exc: BaseException) -> None:
        self.job = None
        self._busy(False)
        self.status.setText("")
        self._show_error(f"{type(exc).__name__}: {exc}")
        self.failed.emit(exc)

    def _busy(self, busy: bool) -> None:
        self.progress.setVisible(busy or self.progress.value() > 0)
        if busy:
            self.progress.setRange(0, 0)
            self.progress.setValue(0)
            self.error.setVisible(False)
        self.run_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        for w in (self.start, self.extra, self.on_diverge, *self.editors.values()):
            w.setEnabled(not busy)

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(True)

    def done(self, result: int) -> None:
        """Closing the dialog stops a running replay (the partial trace stays)."""
        self.runner.cancel("rerun-starts")
        if self.job is not None:
            self.runner.stop(self.job)
        super().done(result)


def _editor(s: Setting, value: Any) -> Editor:
    if s.kind == "choice":
        box = QComboBox()
        for c in s.choices:
            box.addItem(c, c)
        box.setCurrentIndex(max(0, box.findData(value)))
        return box
    if s.kind == "float":
        spin = QDoubleSpinBox()
        spin.setDecimals(2)
        spin.setSingleStep(0.05)
        spin.setRange(s.minimum, s.maximum)
        spin.setValue(float(value))
        return spin
    ispin = QSpinBox()
    ispin.setRange(int(s.minimum), int(s.maximum))
    ispin.setGroupSeparatorShown(True)
    ispin.setSingleStep(1024 if s.key == "window" else 1)
    if s.key == "window":
        ispin.setSuffix(" tokens")
    ispin.setValue(int(value))
    return ispin
