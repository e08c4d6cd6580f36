"""A one-line label that never widens its window.

A ``QLabel``'s minimum width is its whole text, so a long status line ("368 messages on
this path · 7 compaction bands · …") made the main window wider than 1280 px and grow
as the text changed. ``ElidedLabel`` asks for no width: text that does not fit ends in
"…" and the full line becomes its tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None, minimum: int = 0) -> None:
        super().__init__(text, parent)
        self._minimum = minimum
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(minimum)

    def minimumSizeHint(self) -> QSize:
        return QSize(self._minimum, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """The text as painted (elided to the label's width)."""
        width = self.contentsRect().width()
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, width)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._sync_tip()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._sync_tip()

    def _sync_tip(self) -> None:
        self.setToolTip(self.text() if self.shown_text() != self.text() else "")

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        align = self.alignment() | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.contentsRect(), int(align), self.shown_text())
