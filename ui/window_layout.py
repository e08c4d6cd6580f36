"""Where the main window's parts go: the docks (made before the first paint, so a saved
layout applies to the first frame), their first sizes, and the central area that holds a
placeholder until the timeline is built."""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

LEFT, RIGHT, BOTTOM = (
    Qt.DockWidgetArea.LeftDockWidgetArea,
    Qt.DockWidgetArea.RightDockWidgetArea,
    Qt.DockWidgetArea.BottomDockWidgetArea,
)


class Dock(NamedTuple):
    name: str
    title: str
    area: Qt.DockWidgetArea
    tab_with: str | None = None
    """Tabbed behind this dock."""


#: The docks, left to right and top to bottom.
DOCKS = (
    Dock("traces", "Traces", LEFT),
    Dock("goals", "Goals", LEFT),
    Dock("sources", "Sources", LEFT, "goals"),
    Dock("detail", "Message", RIGHT),
    Dock("context", "Context", RIGHT),
    Dock("skills", "Skills", BOTTOM),
    Dock("grants", "Grants", BOTTOM, "skills"),
    Dock("budget", "Budget", BOTTOM, "grants"),
    Dock("delegation", "Delegation", BOTTOM, "budget"),
)
RIGHT_SHARE = 0.29
"""The Message and Context docks' share of the window's width once it is shown
(``ui/main_window.py:MainWindow._size_docks``): 464 px at 1600, 371 at 1280."""
#: Initial sizes: (docks, sizes, orientation).
SIZES = (
    (("traces", "detail"), (440, 500), Qt.Orientation.Horizontal),
    (("traces", "goals"), (420, 240), Qt.Orientation.Vertical),
    (("detail", "context"), (380, 560), Qt.Orientation.Vertical),
    (("skills",), (190,), Qt.Orientation.Vertical),
)


class CentralStack(QWidget):
    """The central area: a placeholder, then the timeline in its place (replacing the
    central widget of a shown window would undo the docks' sizes)."""

    def __init__(self, first: QWidget) -> None:
        super().__init__()
        self.shown = first
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.addWidget(first)

    def replace(self, widget: QWidget) -> None:
        self.box.replaceWidget(self.shown, widget)
        self.shown.deleteLater()
        self.shown = widget


def loading(text: str) -> QLabel:
    """What a pane shows until it is built (the first frame)."""
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setEnabled(False)
    return label
