"""The pieces every settings dialog of the window is made of: a token-count box, the
accept/cancel buttons whose accept checks the input first (the dialog stays open on bad
input), and a column of rows."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLayout, QSpinBox, QVBoxLayout, QWidget

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
