"""One dialog of a kind per window: the open one is raised, a closed one is replaced by a
new dialog (and deleted then). The window and the panes that open dialogs (compact, store
URL, new demo run, run a task, help, re-run, fork) share this lifecycle instead of each
spelling it out; each keeps its last dialog in an attribute, for its result and for tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtWidgets import QDialog

D = TypeVar("D", bound=QDialog)


def is_open(dialog: QDialog) -> bool:
    return dialog.isVisible()


def show_one(current: D | None, make: Callable[[], D], reuse: Callable[[D], bool] = is_open) -> D:
    """``current`` shown and raised if ``reuse`` says so (default: it is open), otherwise a
    new dialog from ``make``, opened (window-modal). Assign the result back:
    ``self.dialog = show_one(self.dialog, make)``."""
    if current is not None and reuse(current):
        current.open()
        current.raise_()
        current.activateWindow()
        return current
    if current is not None:
        current.deleteLater()
    dialog = make()
    dialog.open()
    return dialog
