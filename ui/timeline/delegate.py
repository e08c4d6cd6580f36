"""Paints one timeline row: role icon, sequence, goal chip, preview, badges, tokens.

Compaction bands get a full-width coloured band with their text; a row whose page is
still loading gets grey placeholder shapes where its icon and text will be. Rows outside the current
context are drawn faded; during playback the call's head row carries an amber cursor and
later rows say "not yet". Like Qt's star delegate, it paints the selection background
through the style first and then draws its own content on top.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from core.inspector.bands import Band
from core.inspector.timeline import BADGES, TimelineRow
from ui.theme import BADGE_COLORS, BAND_COLORS, BAND_DEFAULT, ROLE_COLORS, is_dark
from ui.timeline.model import (
    CursorRole,
    InContextRole,
    Index,
    LaterRole,
    Loading,
    MatchRole,
    RowRole,
    ShortenedRole,
)

BADGE_OPACITY = 0.85
"""The least opacity of a row's badges: a row not yet reached in playback (or out of context)
is drawn faded, and its badges' white text on a chip at 25 % was unreadable (screenshot
review); what a badge says (error, summary, …) stays true of the row."""

ROW_HEIGHT = 26
PLAYBACK_COLOR = "#d9a520"
"""The playback cursor (the head of the call being played back)."""
ROLE_LETTER = {"system": "S", "user": "U", "assistant": "A", "tool": "T"}


class TimelineDelegate(QStyledItemDelegate):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._placeholders: dict[tuple[int, int, int, float], QPixmap] = {}

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(400, ROW_HEIGHT)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        record = index.data(RowRole)
        painter.save()
        try:
            if isinstance(record, Band):
                self._paint_band(painter, option, record)
            elif isinstance(record, TimelineRow):
                self._paint_row(painter, option, index, record)
            elif isinstance(record, Loading):
                self._paint_loading(painter, option)
        finally:
            painter.restore()

    # -- bands ----------------------------------------------------------------------------
    def _paint_band(self, p: QPainter, option: QStyleOptionViewItem, band: Band) -> None:
        rect = option.rect.adjusted(2, 2, -2, -2)
        color = QColor(BAND_COLORS.get(band.level, BAND_DEFAULT))
        fill = QColor(color)
        fill.setAlpha(70)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(color if not selected else option.palette.color(QPalette.ColorRole.Highlight))
        p.setBrush(fill)
        p.drawRoundedRect(rect, 4, 4)
        p.fillRect(QRect(rect.left(), rect.top(), 5, rect.height()), color)
        font = QFont(option.font)
        font.setBold(True)
        p.setFont(font)
        p.setPen(option.palette.color(QPalette.ColorRole.Text))
        text_rect = rect.adjusted(14, 0, -8, 0)
        text = "⇡ compaction — " + band.text
        elided = QFontMetrics(font).elidedText(text, Qt.TextElideMode.ElideRight, text_rect.width())
        p.drawText(text_rect, int(Qt.AlignmentFlag.AlignVCenter), elided)

    # -- rows still loading ----------------------------------------------------------------
    def _paint_loading(self, p: QPainter, option: QStyleOptionViewItem) -> None:
        """Grey shapes where the role icon, the number and the preview will be: one cached
        pixmap per row size and colour. A fast scroll paints little else, and each Qt call
        hands the GIL to a page being read and waits to get it back."""
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, p, option.widget)
        shade = option.palette.color(QPalette.ColorRole.Text).rgb()
        ratio = p.device().devicePixelRatioF()
        key = (option.rect.width(), option.rect.height(), shade, ratio)
        pixmap = self._placeholders.get(key)
        if pixmap is None:
            if len(self._placeholders) > 8:  # resized or restyled: the old ones are done
                self._placeholders.clear()
            pixmap = self._placeholders[key] = _placeholder(option.rect.size(), shade, ratio)
        p.drawPixmap(option.rect.topLeft(), pixmap)

    # -- message rows ---------------------------------------------------------------------
    def _paint_row(
        self,
        p: QPainter,
        option: QStyleOptionViewItem,
        index: Index,
        row: TimelineRow,
    ) -> None:
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelItemViewItem, option, p, option.widget)
        if index.data(MatchRole):
            mark = QColor("#f2c94c")
            mark.setAlpha(90)
            p.fillRect(option.rect, mark)
        if index.data(CursorRole):
            cursor = QColor(PLAYBACK_COLOR)
            p.fillRect(
                QRect(option.rect.left(), option.rect.top(), 4, option.rect.height()), cursor
            )
            cursor.setAlpha(55)
            p.fillRect(option.rect, cursor)
        live = bool(index.data(InContextRole))
        later = bool(index.data(LaterRole))
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if later:
            p.setOpacity(0.75 if selected else 0.25)
        elif not live:
            p.setOpacity(0.75 if selected else 0.42)
        text_color = option.palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        dim = QColor(text_color)
        dim.setAlpha(150)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = option.rect
        x = r.left() + 6
        x = self._role_icon(p, r, x, row.role)
        x = self._text(p, r, x, 62, f"#{row.sequence}", dim, option.font, mono=True)
        x = self._goal_chip(p, r, x, row.goal_id, text_color, option)
        right = r.right() - 6
        right = self._tokens(p, r, right, row.tokens, dim, option.font)
        right = self._badges(p, r, right, row.badges, option.font)
        if later:
            right = self._text_right(p, r, right, "not yet", dim, option.font, italic=True)
        elif not live:
            right = self._text_right(p, r, right, "out of context", dim, option.font, italic=True)
        elif index.data(ShortenedRole):
            right = self._text_right(p, r, right, "shortened", dim, option.font, italic=True)
        self._preview(p, r, x, right - 8, row, text_color, option.font)

    def _role_icon(self, p: QPainter, r: QRect, x: int, role: str) -> int:
        d = 18
        circle = QRect(x, r.center().y() - d // 2 + 1, d, d)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(ROLE_COLORS.get(role, "#888888")))
        p.drawEllipse(circle)
        font = QFont(p.font())
        font.setBold(True)
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.8))
        p.setFont(font)
        p.setPen(QColor("white"))
        p.drawText(circle, int(Qt.AlignmentFlag.AlignCenter), ROLE_LETTER.get(role, "?"))
        return x + d + 8

    def _text(
        self,
        p: QPainter,
        r: QRect,
        x: int,
        width: int,
        text: str,
        color: QColor,
        font: QFont,
        mono: bool = False,
    ) -> int:
        f = QFont(font)
        if mono:
            f.setFamily("DejaVu Sans Mono")
            f.setStyleHint(QFont.StyleHint.Monospace)
            f.setPointSizeF(max(6.0, f.pointSizeF() * 0.9))
        p.setFont(f)
        p.setPen(color)
        p.drawText(QRect(x, r.top(), width, r.height()), int(Qt.AlignmentFlag.AlignVCenter), text)
        return x + width

    def _goal_chip(
        self,
        p: QPainter,
        r: QRect,
        x: int,
        goal: str | None,
        color: QColor,
        option: QStyleOptionViewItem,
    ) -> int:
        width = 48
        if goal:
            font = QFont(option.font)
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
            chip = QRect(x, r.center().y() - 8, width - 6, 17)
            p.setPen(QColor("#d9a520"))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(chip, 8, 8)
            p.setFont(font)
            p.setPen(color)
            text = QFontMetrics(font).elidedText(
                goal, Qt.TextElideMode.ElideRight, chip.width() - 6
            )
            p.drawText(chip, int(Qt.AlignmentFlag.AlignCenter), text)
        return x + width

    def _tokens(
        self, p: QPainter, r: QRect, right: int, tokens: int, color: QColor, font: QFont
    ) -> int:
        return self._text_right(p, r, right, f"{tokens:,} tok", color, font, width=72)

    def _text_right(
        self,
        p: QPainter,
        r: QRect,
        right: int,
        text: str,
        color: QColor,
        font: QFont,
        width: int | None = None,
        italic: bool = False,
    ) -> int:
        f = QFont(font)
        f.setItalic(italic)
        f.setPointSizeF(max(6.0, f.pointSizeF() * 0.9))
        w = width or QFontMetrics(f).horizontalAdvance(text) + 4
        p.setFont(f)
        p.setPen(color)
        flags = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight
        p.drawText(QRect(right - w, r.top(), w, r.height()), int(flags), text)
        return right - w - 6

    def _badges(
        self, p: QPainter, r: QRect, right: int, badges: tuple[str, ...], font: QFont
    ) -> int:
        f = QFont(font)
        f.setPointSizeF(max(6.0, f.pointSizeF() * 0.8))
        fm = QFontMetrics(f)
        p.setFont(f)
        faded = p.opacity()
        p.setOpacity(max(faded, BADGE_OPACITY))
        for badge in reversed(badges):
            label = BADGES[badge]
            w = fm.horizontalAdvance(label) + 12
            chip = QRect(right - w, r.center().y() - 8, w, 17)
            color = QColor(BADGE_COLORS.get(badge, "#888888"))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(color)
            p.drawRoundedRect(chip, 8, 8)
            p.setPen(QColor("white"))
            p.drawText(chip, int(Qt.AlignmentFlag.AlignCenter), label)
            right -= w + 4
        p.setOpacity(faded)
        return right

    def _preview(
        self,
        p: QPainter,
        r: QRect,
        x: int,
        right: int,
        row: TimelineRow,
        color: QColor,
        font: QFont,
    ) -> None:
        width = right - x
        if width < 20:
            return
        f = QFont(font)
        p.setFont(f)
        fm = QFontMetrics(f)
        text = row.preview or ("(empty)" if not row.tool_names else "")
        if row.role == "tool" and row.tool_names:
            text = f"{row.tool_names[0]} → {text}"
        p.setPen(color)
        elided = fm.elidedText(text, Qt.TextElideMode.ElideRight, width)
        p.drawText(QRect(x, r.top(), width, r.height()), int(Qt.AlignmentFlag.AlignVCenter), elided)


def dark_mode(palette: QPalette) -> bool:
    return is_dark(palette)


def _placeholder(size: QSize, text_rgb: int, ratio: float) -> QPixmap:
    """The shapes of a loading row: the role icon, the number, the preview, the tokens."""
    pixmap = QPixmap(round(size.width() * ratio), round(size.height() * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    shade = QColor(text_rgb)
    shade.setAlpha(40)
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(shade)
    x, mid, width = 6, (size.height() - 1) // 2, size.width()  # as QRect.center()
    p.drawEllipse(QRect(x, mid - 8, 18, 18))
    p.drawRoundedRect(QRect(x + 26, mid - 4, 40, 9), 4, 4)
    p.drawRoundedRect(QRect(x + 122, mid - 4, max(0, min(width - 190, 520)), 9), 4, 4)
    p.drawRoundedRect(QRect(width - 67, mid - 4, 60, 9), 4, 4)
    p.end()
    return pixmap
