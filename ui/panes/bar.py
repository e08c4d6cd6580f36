"""A stacked bar of tokens by component, drawn against the window and budget markers.

With the window unknown there is no scale to draw the prompt against: the segments take
``UNKNOWN_WINDOW_SHARE`` of the width, their proportions only, and the rest is hatched and
says "window unknown" — never a bar filled to the end, which reads as a full window.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFontMetrics,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from core.context.budget import Budget
from core.context.view import COMPONENTS
from ui.theme import COMPONENT_COLORS

BAR_HEIGHT = 22
LEGEND_GAP = 8
"""Pixels between the bar and the legend's first row."""
UNKNOWN_WINDOW_SHARE = 0.6
"""The share of the bar the segments take when the window is unknown."""
UNKNOWN_WINDOW_TEXT = "window unknown"

MARKER_COLORS = {
    "compaction threshold": "#d9a520",
    "auto-compact point": "#d9a520",
    "soft budget": "#c9842a",
    "hard budget": "#d1495b",
    "window": "#888888",
}


class TokenBar(QWidget):
    """Segments in ``COMPONENTS`` order; the scale is the larger of total and window."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokenBar")
        self.parts: list[tuple[str, int]] = []
        self.total = 0
        self.budget = Budget()
        self.estimated = False
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fit()

    def sizeHint(self) -> QSize:
        return QSize(400, self.needed_height(self.width()))

    def needed_height(self, width: int) -> int:
        """The height that shows the limits' labels, the bar and every legend row at
        ``width`` (a fixed 128 px cut a legend that wrapped to more rows in a narrow dock,
        and kept an empty row in a wide one)."""
        fm = QFontMetrics(self.font())
        rows = 1 + max((row for row, _x, _entry in self._legend_layout(width, fm)), default=0)
        return 2 * fm.height() + 6 + BAR_HEIGHT + LEGEND_GAP + rows * (fm.height() + 2) + 4

    def _fit(self) -> None:
        height = self.needed_height(max(self.width(), 1))
        if self.height() != height or self.minimumHeight() != height:
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit()

    def set_data(
        self, by_component: dict[str, int], total: int, budget: Budget, estimated: bool = False
    ) -> None:
        """``by_component`` may hold parts beyond ``COMPONENTS`` (``not_in_transcript``):
        they are drawn after them, and ``total`` should include them. ``estimated``: the
        total is an estimate, and so is the free space ("≈")."""
        order = [*COMPONENTS, *(c for c in by_component if c not in COMPONENTS)]
        self.parts = [(c, by_component.get(c, 0)) for c in order if by_component.get(c, 0) > 0]
        self.total = total
        self.budget = budget
        self.estimated = estimated
        self.setToolTip(
            "\n".join(f"{_name(c)}: {n:,} tokens" for c, n in self.parts)
            + (
                f"\ntotal: {total:,} of a window of {budget.window_text()}"
                if budget.window
                else f"\ntotal: {total:,}; window unknown (the bar shows proportions only)"
            )
        )
        self._fit()
        self.update()

    def scale(self) -> float:
        """Tokens per full bar width: the larger of total and window; with the window
        unknown, the total over ``UNKNOWN_WINDOW_SHARE`` (the rest is hatched)."""
        if self.budget.window is None:
            return max(self.total / UNKNOWN_WINDOW_SHARE, 1)
        return max(self.total, self.budget.window, 1)

    def marker_labels(self) -> list[str]:
        """The limits as drawn above the bar and in the legend ("auto-compact fired at
        167,094": an observed limit says so)."""
        return [f"{self.budget.label(n)} {v:,}" for n, v in self.budget.markers()]

    def free_space(self) -> int | None:
        """Window tokens not used (``None``: the window is unknown)."""
        return None if self.budget.window is None else max(0, self.budget.window - self.total)

    def free_text(self) -> str:
        """The legend's free space: ``free space 33,241``, ``free space ≈178,308`` (of an
        estimated prompt), or ``window unknown``."""
        free = self.free_space()
        if free is None:
            return UNKNOWN_WINDOW_TEXT
        return f"free space {'≈' if self.estimated else ''}{free:,}"

    def segment_rects(self, bar: QRect) -> list[tuple[str, QRectF]]:
        out = []
        x = float(bar.left())
        per = bar.width() / self.scale()
        for name, n in self.parts:
            w = n * per
            out.append((name, QRectF(x, bar.top(), w, bar.height())))
            x += w
        return out

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.WindowText)
        fm = QFontMetrics(self.font())
        bar = QRect(6, 2 * fm.height() + 6, self.width() - 12, BAR_HEIGHT)
        p.fillRect(bar, self.palette().color(QPalette.ColorRole.AlternateBase))
        rects = self.segment_rects(bar)
        for name, rect in rects:
            p.fillRect(rect, QColor(COMPONENT_COLORS.get(name, "#999999")))
        p.setPen(self.palette().color(QPalette.ColorRole.Mid))
        p.drawRect(bar)
        if self.budget.window is None:
            self._unknown_window(p, bar, rects[-1][1].right() if rects else bar.left())
        self._markers(p, bar, fm)
        self._legend(p, bar.bottom() + LEGEND_GAP, fm, text)
        p.end()

    def _unknown_window(self, p: QPainter, bar: QRect, x: float) -> None:
        """The width past the segments: hatched, no scale, "window unknown" in it."""
        rest = QRect(int(x) + 1, bar.top() + 1, bar.right() - int(x) - 1, bar.height() - 1)
        mid = self.palette().color(QPalette.ColorRole.Mid)
        p.fillRect(rest, QBrush(mid, Qt.BrushStyle.BDiagPattern))
        text = self.palette().color(QPalette.ColorRole.WindowText)
        p.setPen(text)
        p.drawText(rest, int(Qt.AlignmentFlag.AlignCenter), UNKNOWN_WINDOW_TEXT)

    def _markers(self, p: QPainter, bar: QRect, fm: QFontMetrics) -> None:
        """Lines at each limit; labels on two rows above the bar so close limits stay legible."""
        placed = self._marker_rows(bar.left(), bar.width(), fm)
        for (name, _value), label, (x, lx, row) in zip(
            self.budget.markers(), self.marker_labels(), placed, strict=True
        ):
            color = QColor(MARKER_COLORS.get(name, "#888888"))
            p.setPen(color)
            p.drawLine(x, bar.top() - 3, x, bar.bottom() + 3)
            if row is not None:
                p.drawText(lx, bar.top() - 5 - (1 - row) * fm.height(), label)

    def _marker_rows(
        self, left: int, width: int, fm: QFontMetrics
    ) -> list[tuple[int, int, int | None]]:
        """``(line x, label x, label row)`` of each limit on a bar at ``left`` ``width``
        wide: a label goes on the lower row above the bar, else the upper one, else none
        (the legend names that limit)."""
        per = width / self.scale()
        row_right = [-1, -1]
        out: list[tuple[int, int, int | None]] = []
        for (_name, value), label in zip(self.budget.markers(), self.marker_labels(), strict=True):
            x = left + int(value * per)
            w = fm.horizontalAdvance(label)
            lx = min(max(left, x - w // 2), left + width - w)
            at = None
            for row in (1, 0):
                if lx > row_right[row]:
                    row_right[row] = lx + w + 6
                    at = row
                    break
            out.append((x, lx, at))
        return out

    def _legend(self, p: QPainter, y: int, fm: QFontMetrics, text: QColor) -> None:
        """Component swatches, then each limit whose label did not fit above the bar (so
        every limit is named once), in the rows ``_legend_layout`` gives them."""
        row_h = fm.height() + 2
        for row, x, (label, color, marker) in self._legend_layout(self.width(), fm):
            top = y + row * row_h
            swatch = QRect(x + 4, top + 2, 2, 12) if marker else QRect(x, top + 3, 10, 10)
            p.fillRect(swatch, QColor(color))
            p.setPen(text)
            w = fm.horizontalAdvance(label) + 18
            p.drawText(QRect(x + 14, top, w, row_h), int(Qt.AlignmentFlag.AlignVCenter), label)

    def _legend_layout(
        self, width: int, fm: QFontMetrics
    ) -> list[tuple[int, int, tuple[str, str, bool]]]:
        """``(row, x, (label, colour, is a limit))`` of each legend entry at ``width``: the
        entries flow left to right and wrap (the painting and the height read the same)."""
        entries = [(f"{_name(n)} {v:,}", COMPONENT_COLORS.get(n, "#999999"), False)
                   for n, v in self.parts]  # fmt: skip
        entries.append((self.free_text(), "#dddddd", False))
        above = self._marker_rows(6, width - 12, fm)
        entries += [(label, MARKER_COLORS.get(n, "#888888"), True)
                    for (n, _), label, (_x, _lx, row) in zip(
                        self.budget.markers(), self.marker_labels(), above, strict=True)
                    if row is None]  # fmt: skip
        out = []
        x, row = 6, 0
        for entry in entries:
            w = fm.horizontalAdvance(entry[0]) + 18
            if x + w > width - 6 and x > 6:
                x = 6
                row += 1
            out.append((row, x, entry))
            x += w + 8
        return out


#: Parts beyond ``COMPONENTS`` as a person reads them.
EXTRA_NAMES = {
    "not_in_transcript": "not in the transcript",
    "images_estimated": "images (estimated)",
}


def _name(component: str) -> str:
    """A component as a person reads it (``not_in_transcript`` → "not in the transcript")."""
    return EXTRA_NAMES.get(component) or component.replace("_", " ")
