"""Run → New demo run…: the scenario of a fresh demo trace and its options, which the window
then creates in the open store and opens ready to Step or Run.

- risk, the 30-day risk analysis (``core/demo/scenario.py:create_demo_trace``): window,
  compaction mode, model calls, any run setting as ``key=value``;
- delegation, a recursive delegation tree (``core/demo/delegation.py:
  create_delegation_trace``): its limits as ``NAME=N`` (``validator_chars=2000``).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QPlainTextEdit,
    QSpinBox,
    QWidget,
)

from core.delegation.config import DEFAULT_LIMITS
from core.demo.options import DelegationDemoOptions
from core.demo.scenario import TASK, DemoOptions, demo_config
from core.run.config import settings_help
from ui.dialogs.form import CheckedDialog, accept_buttons, column, token_box
from ui.widgets import wrapped_label

MODES = {
    "ctxlens": "ctxlens — goal, snip, micro and summary layers",
    "naive": "naive — keep the most recent messages (baseline)",
    "none": "none — no compaction, unlimited window",
}


SCENARIOS = {
    "risk": "risk — the 30-day risk analysis (goals, compaction, refs)",
    "delegation": "delegation — a root, two children and a grandchild (briefs, refs, validator)",
}
DELEGATION_TASK = (
    "<b>Task</b>: the root delegates the risk analysis: it revises the scout, drops the "
    "probe by a rewind, and the analyst re-grants one ref to its own child. Each report "
    "gets a validator verdict; see the Delegation pane."
)
RISK_SETTINGS = "key=value, one per line (e.g. micro_keep_recent=6)"
LIMIT_SETTINGS = "delegation limits NAME=N, one per line (e.g. validator_chars=2000)"


class NewDemoDialog(CheckedDialog):
    """Emits ``chosen`` with the ``DemoOptions`` (risk) or ``DelegationDemoOptions``
    (delegation) to create a demo trace with."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("newDemoDialog", "New demo run", "demoSettingsError", parent)
        defaults = DemoOptions()
        self.scenario = QComboBox()
        self.scenario.setObjectName("demoScenario")
        for key, label in SCENARIOS.items():
            self.scenario.addItem(label, key)
        self.scenario.currentIndexChanged.connect(self._scenario_changed)
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
        self.settings.setFixedHeight(64)
        self.task = wrapped_label(name="demoTask")
        note = wrapped_label(
            "The demo's scripted model is served on 127.0.0.1 while the trace is running; "
            "nothing leaves this machine."
        )
        form = QFormLayout()
        form.addRow("Scenario", self.scenario)
        form.addRow("Context window", self.window_box)
        form.addRow("Compaction", self.mode)
        form.addRow("Model calls", self.steps)
        form.addRow("Run settings", self.settings)
        column(
            self, self.task, form, self.error, note, accept_buttons(self, self._accept, "Create")
        )
        self._scenario_changed()

    def delegation(self) -> bool:
        return bool(self.scenario.currentData() == "delegation")

    def _scenario_changed(self) -> None:
        """Only what the chosen scenario takes is enabled; the settings box says which."""
        delegation = self.delegation()
        for box in (self.mode, self.steps):
            box.setEnabled(not delegation)
        self._mode_changed()
        self.task.setText(DELEGATION_TASK if delegation else f"<b>Task</b>: {TASK}")
        self.settings.setPlaceholderText(LIMIT_SETTINGS if delegation else RISK_SETTINGS)
        self.settings.setToolTip(
            "Delegation limits and their defaults:\n"
            + "\n".join(f"  {k}={v}" for k, v in DEFAULT_LIMITS.to_json().items())
            if delegation
            else "Run settings and their defaults:\n" + settings_help()
        )
        self.error.setVisible(False)

    def _lines(self) -> tuple[str, ...]:
        return tuple(
            line.strip() for line in self.settings.toPlainText().splitlines() if line.strip()
        )

    def options(self) -> DemoOptions:
        return DemoOptions(
            steps=self.steps.value(),
            window=self.window_box.value(),
            compaction=str(self.mode.currentData()),
            settings=self._lines(),
        )

    def _mode_changed(self) -> None:
        self.window_box.setEnabled(not self.delegation() and self.mode.currentData() != "none")

    def checked(self) -> DemoOptions | DelegationDemoOptions:
        if self.delegation():
            chosen = DelegationDemoOptions(self._lines())
            chosen.limits()  # a bad name or value is shown, the dialog stays open
            return chosen
        opts = self.options()
        demo_config(opts)  # a bad key or value is shown, the dialog stays open
        return opts
