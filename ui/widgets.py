"""Constructors of the small widgets panes and dialogs make the same way: a named button
with its tip and action (the hidden error or warning note is ``ui/theme.py:accent_note``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QPushButton


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
