"""Esc and Ctrl+W close a secondary window (the comparison, the re-run dialog), as in
every other desktop application."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QWidget


def add_close_keys(
    widget: QWidget, close: Callable[[], object] | None = None, escape: bool = True
) -> list[QShortcut]:
    """Ctrl+W (the platform's Close key) and, unless ``escape`` is False (a ``QDialog``
    handles Esc itself), Esc call ``close`` (default ``widget.close``)."""
    keys = [QKeySequence(QKeySequence.StandardKey.Close), QKeySequence("Ctrl+W")]
    if escape:
        keys.append(QKeySequence(Qt.Key.Key_Escape))
    shortcuts: list[QShortcut] = []
    for key in dict.fromkeys(k.toString() for k in keys):
        shortcut = QShortcut(QKeySequence(key), widget)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(close or widget.close)
        shortcuts.append(shortcut)
    return shortcuts
