"""Splitters and labelled pages built the same way in the compare view and the compaction
dialog, so the two windows lay out their panes alike."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget


def splitter(
    orientation: Qt.Orientation,
    widgets: Sequence[QWidget],
    stretch: Sequence[int] = (),
    sizes: Sequence[int] = (),
) -> QSplitter:
    """A splitter holding ``widgets`` in order, with stretch factors and initial sizes."""
    split = QSplitter(orientation)
    for widget in widgets:
        split.addWidget(widget)
    for index, factor in enumerate(stretch):
        split.setStretchFactor(index, factor)
    if sizes:
        split.setSizes(list(sizes))
    return split


def labelled_page(label: QLabel, body: QWidget) -> QWidget:
    """A tab page: ``label`` above ``body``, which takes the spare height."""
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(label)
    layout.addWidget(body, 1)
    return page
