"""Run → Run a task…: a task for the real runtime against an endpoint the user names (base
URL, model), the key taken from an environment variable or the desktop keyring when the run
opens (``core/run/task_run.py``). The dialog shows where the key comes from and whether it
is there, never the key; nothing of it is saved."""

from __future__ import annotations

import os

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from core.llm.settings import ENV_BASE_URL, ENV_KEYS, ENV_MODEL
from core.run.task_run import KEYRING_SERVICE, TaskRun, find_key, keyring_available
from ui.dialogs.form import CheckedDialog, accept_buttons, column, token_box
from ui.widgets import wrapped_label


class RunTaskDialog(CheckedDialog):
    """Emits ``chosen`` with the ``TaskRun`` to start."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("runTaskDialog", "Run a task", "taskError", parent)
        self.setMinimumWidth(520)
        self.base_url = QLineEdit(os.environ.get(ENV_BASE_URL, ""))
        self.base_url.setObjectName("taskBaseUrl")
        self.base_url.setPlaceholderText("https://api.openai.com/v1")
        self.model = QLineEdit(os.environ.get(ENV_MODEL, ""))
        self.model.setObjectName("taskModel")
        self.model.setPlaceholderText("the model name the endpoint serves")
        self.task = QPlainTextEdit()
        self.task.setObjectName("taskText")
        self.task.setPlaceholderText("What should the agent do?")
        self.task.setFixedHeight(90)
        self.key = QComboBox()
        self.key.setObjectName("taskKeySource")
        for name in ENV_KEYS:
            self.key.addItem(f"environment variable {name}", f"env:{name}")
        if keyring_available():
            self.key.addItem(f"desktop keyring (service “{KEYRING_SERVICE}”)", "keyring")
        self.key.addItem("no key", "none")
        self.key_state = QLabel()
        self.key_state.setObjectName("taskKeyState")
        self.window_box = token_box(4_000, 2_000_000, 8_000, 128_000)
        self.demo_tools = QCheckBox("Offer the demo world's tools")
        form = QFormLayout()
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("Task", self.task)
        form.addRow("API key from", self.key)
        form.addRow("", self.key_state)
        form.addRow("Context window", self.window_box)
        form.addRow("", self.demo_tools)
        note = wrapped_label(
            "The key is read when the run starts and kept in memory only: never in the "
            "store, the settings or the logs. Requests go only to the base URL above."
        )
        column(self, form, note, self.error, accept_buttons(self, self._accept, "Start"))
        self.key.currentIndexChanged.connect(self._show_key_state)
        self.base_url.textChanged.connect(self._show_key_state)
        self._show_key_state()

    def run(self) -> TaskRun:
        return TaskRun(
            self.base_url.text(),
            self.model.text(),
            self.task.toPlainText(),
            str(self.key.currentData()),
            self.window_box.value(),
            self.demo_tools.isChecked(),
        )

    def _show_key_state(self) -> None:
        source = str(self.key.currentData())
        if source == "none":
            self.key_state.setText("requests are sent without an Authorization header")
            return
        found = find_key(source, self.base_url.text())
        where = "set" if source.startswith("env:") else "found"
        self.key_state.setText(f"✓ key {where}" if found else "✗ no key there")

    def checked(self) -> TaskRun:
        return self.run().check()
