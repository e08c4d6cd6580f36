"""Input tokens per main-agent call of two traces, painted with QPainter.

Both series share the axes (colours as in the HTML report: A blue, B orange); each side's
compactions are triangles under the axis, in a row of their own, before the call that
first saw the compacted context. Clicking the chart chooses a call; the chosen one is a
vertical line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

from core.replay.calls import InputBasis
from core.replay.compare import CompactionMark, basis_text, tokens_text
from core.replay.report import COLORS

LEFT, RIGHT, TOP, BOTTOM = 64, 16, 26, 64
_T = TypeVar("_T")


class TokenChart(QWidget):
    call_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tokenChart")
        self.series: dict[str, tuple[int, ...]] = {"a": (), "b": ()}
        self.marks: dict[str, tuple[CompactionMark, ...]] = {"a": (), "b": ()}
        self.bases: dict[str, tuple[InputBasis, ...]] = {"a": (), "b": ()}
        """Where each call's input comes from (``Side.input_basis``): named in the legend
        and the chosen call's label."""
        self.selected: int | None = None
        self.setMinimumHeight(220)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(700, 260)

    def set_data(
        self,
        a: Sequence[int],
        b: Sequence[int],
        marks_a: Sequence[CompactionMark],
        marks_b: Sequence[CompactionMark],
        bases_a: Sequence[InputBasis] = (),
        bases_b: Sequence[InputBasis] = (),
    ) -> None:
        self.series = {"a": tuple(a), "b": tuple(b)}
        self.marks = {"a": tuple(marks_a), "b": tuple(marks_b)}
        self.bases = {"a": tuple(bases_a), "b": tuple(bases_b)}
        self.selected = None
        self.update()

    def select(self, k: int | None) -> None:
        self.selected = k
        self.update()

    # -- geometry ---------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        return max(len(self.series["a"]), len(self.series["b"]))

    @property
    def top(self) -> int:
        """The y axis' top: the largest value rounded up to 1, 2, 2.5 or 5 × 10ⁿ."""
        return nice_ceiling(max([*self.series["a"], *self.series["b"], 1]))

    def plot(self) -> QRectF:
        return QRectF(LEFT, TOP, max(10, self.width() - LEFT - RIGHT),
                      max(10, self.height() - TOP - BOTTOM))  # fmt: skip

    def x_of(self, k: float) -> float:
        r = self.plot()
        return r.left() + r.width() * k / max(1, self.calls - 1)

    def y_of(self, v: float) -> float:
        r = self.plot()
        return r.bottom() - r.height() * v / self.top

    def call_at(self, x: float) -> int | None:
        if not self.calls:
            return None
        r = self.plot()
        k = round((x - r.left()) / max(1.0, r.width()) * max(1, self.calls - 1))
        return max(0, min(self.calls - 1, k))

    # -- painting ---------------------------------------------------------------------------
    def paintEvent(self, _event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Base))
            if not self.calls:
                p.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
                p.drawText(self.rect(), int(Qt.AlignmentFlag.AlignCenter), "No calls to chart.")
                return
            self._axes(p)
            for key in ("a", "b"):
                self._series(p, key)
                self._marks(p, key)
            self._selection(p)
            self._legend(p)
        finally:
            p.end()

    def _axes(self, p: QPainter) -> None:
        r = self.plot()
        text = self.palette().color(QPalette.ColorRole.Text)
        grid = QColor(text)
        grid.setAlpha(40)
        for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
            y = self.y_of(self.top * frac)
            p.setPen(QPen(grid, 1))
            p.drawLine(QPointF(r.left(), y), QPointF(r.right(), y))
            p.setPen(text)
            p.drawText(QRectF(0, y - 8, LEFT - 6, 16),
                       int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                       f"{int(self.top * frac):,}")  # fmt: skip
        n = self.calls
        step = _tick_step(n, r.width())
        for k in range(0, n, step):
            x = self.x_of(k)
            p.setPen(QPen(grid, 1))
            p.drawLine(QPointF(x, r.bottom()), QPointF(x, r.bottom() + 4))
            p.setPen(text)
            p.drawText(QRectF(x - 24, r.bottom() + 31, 48, 14),
                       int(Qt.AlignmentFlag.AlignCenter), str(k))  # fmt: skip
        p.drawText(QRectF(r.left(), self.height() - 16, r.width(), 16),
                   int(Qt.AlignmentFlag.AlignCenter),
                   "main-agent call (input tokens; ▲ compaction before that call)")  # fmt: skip

    def _series(self, p: QPainter, key: str) -> None:
        values = self.series[key]
        if not values:
            return
        p.setPen(QPen(QColor(COLORS[key]), 1.6))
        line = QPolygonF([QPointF(self.x_of(k), self.y_of(v)) for k, v in enumerate(values)])
        p.drawPolyline(line)

    def _marks(self, p: QPainter, key: str) -> None:
        r = self.plot()
        base = r.bottom() + (10 if key == "a" else 20)
        color = QColor(COLORS[key])
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        for m in self.marks[key]:
            if m.before_call is None:
                continue
            x = self.x_of(m.before_call)
            tri = QPolygonF([QPointF(x, base), QPointF(x - 4, base + 7), QPointF(x + 4, base + 7)])
            p.drawPolygon(tri)

    def _selection(self, p: QPainter) -> None:
        if self.selected is None:
            return
        r = self.plot()
        x = self.x_of(self.selected)
        color = self.palette().color(QPalette.ColorRole.Highlight)
        p.setPen(QPen(color, 1.5, Qt.PenStyle.DashLine))
        p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()))
        p.setPen(self.palette().color(QPalette.ColorRole.Text))
        parts = []
        for key in ("a", "b"):
            value = self._at(self.series[key])
            if value is not None:
                parts.append(f"{key.upper()} {tokens_text(value, self._at(self.bases[key]))}")
        label = f"call {self.selected}: " + " / ".join(parts)
        width = p.fontMetrics().horizontalAdvance(label) + 8
        left = min(max(r.left(), x + 6), r.right() - width)
        p.drawText(QRectF(left, r.top(), width, 16), int(Qt.AlignmentFlag.AlignLeft), label)

    def _at(self, values: tuple[_T, ...]) -> _T | None:
        k = self.selected
        return values[k] if k is not None and k < len(values) else None

    def legend_text(self, key: str) -> str:
        """``A`` and where its inputs come from: ``A (recorded)``, ``B (2 recorded, 1
        counted)``."""
        words = basis_text(self.bases[key])
        return f"{key.upper()} ({words})" if words else key.upper()

    def _legend(self, p: QPainter) -> None:
        x = LEFT
        for key in ("a", "b"):
            name = self.legend_text(key)
            p.setPen(QPen(QColor(COLORS[key]), 3))
            p.drawLine(QPointF(x, 12), QPointF(x + 22, 12))
            p.setPen(self.palette().color(QPalette.ColorRole.Text))
            width = p.fontMetrics().horizontalAdvance(name) + 4
            p.drawText(QRectF(x + 28, 4, width, 16), int(Qt.AlignmentFlag.AlignLeft), name)
            x += max(70, 28 + width + 24)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        k = self.call_at(event.position().x())
        if k is not None:
            self.select(k)
            self.call_clicked.emit(k)


def nice_ceiling(value: int) -> int:
    step = 1
    while True:
        for m in (1, 2, 2.5, 5):
            if m * step >= value:
                return int(m * step)
        step *= 10


def _tick_step(n: int, width: float) -> int:
    """A round step so the call numbers under the axis do not overlap."""
    room = max(1, int(width // 44))
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000):
        if n / step <= room:
            return step
    return max(1, n // room)
