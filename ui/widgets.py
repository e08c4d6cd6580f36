"""Constructors of the small widgets panes and dialogs make the same way: a named button
with its tip and action, and a wrapped error or warning note."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QPushButton

from ui.theme import set_accent


def push_button(
    text: str, name: str, tip: str, on_click: Callable[[], object], enabled: bool = True
) -> QPushButton:
    """A button named ``name`` (tests and style sheets find it by it) that calls
    ``on_click``."""
    button = QPushButton(text)
    button.setObjectName(name)
    button.setToolTip(tip)
    button.setEnabled(enabled)
    button.clicked.connect(on_click)
    return button


def accent_label(accent: str, name: str = "", hidden: bool = True) -> QLabel:
    """A wrapped note in the ``error`` or ``warning`` accent of the theme
    (``ui/theme.py:set_accent``), hidden until it has something to say."""
    label = QLabel("")
    if name:
        label.setObjectName(name)
    label.setWordWrap(True)
    set_accent(label, accent)
    label.setVisible(not hidden)
    return label
