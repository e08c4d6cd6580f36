"""The pieces every settings dialog of the window is made of: a token-count box, the
accept/cancel buttons whose accept checks the input first (the dialog stays open on bad
input), a column of rows, and ``CheckedDialog``, which emits what was chosen only once it
checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLayout, QSpinBox, QVBoxLayout, QWidget

from core.errors import CtxlensError
from ui.theme import accent_note

Button = QDialogButtonBox.StandardButton


def token_box(low: int, high: int, step: int, value: int, name: str = "") -> QSpinBox:
    """A spin box of tokens (a context window): grouped digits, " tokens" after them."""
    box = QSpinBox()
    if name:
        box.setObjectName(name)
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setGroupSeparatorShown(True)
    box.setSuffix(" tokens")
    box.setValue(value)
    return box


def accept_buttons(
    dialog: QDialog, accept: Callable[[], None], text: str = "", ok: Button = Button.Ok
) -> QDialogButtonBox:
    """``ok`` (labelled ``text``) and Cancel; ``accept`` decides whether to close."""
    buttons = QDialogButtonBox(ok | Button.Cancel)
    if text:
        buttons.button(ok).setText(text)
    buttons.accepted.connect(accept)
    buttons.rejected.connect(dialog.reject)
    return buttons


def column(dialog: QDialog, *rows: QWidget | QLayout) -> QVBoxLayout:
    """The dialog's layout: ``rows`` top to bottom."""
    layout = QVBoxLayout(dialog)
    for row in rows:
        if isinstance(row, QLayout):
            layout.addLayout(row)
        else:
            layout.addWidget(row)
    return layout


class CheckedDialog(QDialog):
    """A dialog whose accept (``_accept``) emits ``chosen`` with ``checked()`` and closes;
    a ``CtxlensError`` from it is shown in ``error`` instead and the dialog stays open."""

    chosen = Signal(object)

    def __init__(self, name: str, title: str, error_name: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setWindowTitle(title)
        self.error = accent_note(error_name, "error")

    def checked(self) -> Any:
        """What the dialog chose, checked: raises ``CtxlensError`` naming what is wrong."""
        raise NotImplementedError

    def _accept(self) -> None:
        try:
            value = self.checked()
        except CtxlensError as exc:
            self.error.setText(str(exc))
            self.error.setVisible(True)
            self.adjustSize()
            return
        self.accept()
        self.chosen.emit(value)
