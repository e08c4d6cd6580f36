"""Run → New demo run…: the options of a fresh demo trace (window, compaction mode, model
calls, any run setting as ``key=value``), which the window then creates in the open store
and opens ready to Step or Run (``core/demo/scenario.py:create_demo_trace``)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from core.demo.scenario import TASK, DemoOptions, demo_config
from core.run.config import settings_help
from ui.dialogs.form import CheckedDialog, accept_buttons, column, token_box

MODES = {
    "ctxlens": "ctxlens — goal, snip, micro and summary layers",
    "naive": "naive — keep the most recent messages (baseline)",
    "none": "none — no compaction, unlimited window",
}


class NewDemoDialog(CheckedDialog):
    """Emits ``chosen`` with the ``DemoOptions`` to create a demo trace with."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("newDemoDialog", "New demo run", "demoSettingsError", parent)
        defaults = DemoOptions()
        self.window_box = token_box(4_000, 1_000_000, 2_000, defaults.window, "demoWindow")
        self.mode = QComboBox()
        self.mode.setObjectName("demoCompaction")
        for key, label in MODES.items():
            self.mode.addItem(label, key)
        self.mode.currentIndexChanged.connect(self._mode_changed)
        self.steps = QSpinBox()
        self.steps.setObjectName("demoSteps")
        self.steps.setRange(5, 1_000)
        self.steps.setValue(defaults.steps)
        self.steps.setToolTip("The most model calls of the main agent before it must answer")
        self.settings = QPlainTextEdit()
        self.settings.setObjectName("demoSettings")
        self.settings.setPlaceholderText("key=value, one per line (e.g. micro_keep_recent=6)")
        self.settings.setToolTip("Run settings and their defaults:\n" + settings_help())
        self.settings.setFixedHeight(64)
        task = QLabel(f"<b>Task</b>: {TASK}")
        task.setWordWrap(True)
        note = QLabel(
            "The demo's scripted model is served on 127.0.0.1 while the trace is running; "
            "nothing leaves this machine."
        )
        note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Context window", self.window_box)
        form.addRow("Compaction", self.mode)
        form.addRow("Model calls", self.steps)
        form.addRow("Run settings", self.settings)
        column(self, task, form, self.error, note, accept_buttons(self, self._accept, "Create"))

    def options(self) -> DemoOptions:
        return DemoOptions(
            steps=self.steps.value(),
            window=self.window_box.value(),
            compaction=str(self.mode.currentData()),
            settings=tuple(
                line.strip() for line in self.settings.toPlainText().splitlines() if line.strip()
            ),
        )

    def _mode_changed(self) -> None:
        self.window_box.setEnabled(self.mode.currentData() != "none")

    def checked(self) -> DemoOptions:
        opts = self.options()
        demo_config(opts)  # a bad key or value is shown, the dialog stays open
        return opts
