"""Constructors of the small widgets panes and dialogs make the same way: a named button
with its tip and action, a word-wrapped label (the hidden error or warning note is
``ui/theme.py:accent_note``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QPushButton


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


def wrapped_label(text: str = "", name: str = "") -> QLabel:
    """A label that wraps its text to the width it is given (notes, status lines, headings
    whose text is set later); ``name`` is its object name when given."""
    label = QLabel(text)
    if name:
        label.setObjectName(name)
    label.setWordWrap(True)
    return label
