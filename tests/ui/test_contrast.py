"""Text meets WCAG AA (4.5:1) in both themes: the palette's text/background pairs, the
error and warning accents, the playback badge; and a theme switch reaches widgets under a
style sheet (the Live button stayed white in the dark theme)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QPushButton

from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.replay.scrubber import PLAYBACK_STYLE
from ui.theme import TEXT_ACCENTS, apply_theme, palette

AA = 4.5
R = QPalette.ColorRole
PAIRS = [
    (R.WindowText, R.Window),
    (R.Text, R.Base),
    (R.ButtonText, R.Button),
    (R.PlaceholderText, R.Base),  # dim helper text, goal summaries
    (R.PlaceholderText, R.Window),
    (R.HighlightedText, R.Highlight),
    (R.ToolTipText, R.ToolTipBase),
    (R.Link, R.Base),
    (R.Link, R.Window),
]


def _luminance(c: QColor) -> float:
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.red()) + 0.7152 * channel(c.green()) + 0.0722 * channel(c.blue())


def _over(fg: QColor, bg: QColor) -> QColor:
    a = fg.alphaF()
    mix = [round(f * a + b * (1 - a)) for f, b in zip(fg.getRgb()[:3], bg.getRgb()[:3])]
    return QColor(*mix)


def contrast(fg: QColor, bg: QColor) -> float:
    hi, lo = sorted((_luminance(_over(fg, bg)), _luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_matches_wcag() -> None:
    assert contrast(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21.0)
    assert contrast(QColor("#767676"), QColor("#ffffff")) == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_palette_text_meets_aa(qapp: Any, theme: str) -> None:
    p = palette(theme)
    low = {
        f"{fg.name}/{bg.name}": round(contrast(p.color(fg), p.color(bg)), 2)
        for fg, bg in PAIRS
        if contrast(p.color(fg), p.color(bg)) < AA
    }
    assert low == {}, theme
    for name, color in TEXT_ACCENTS[theme].items():
        for bg in (R.Window, R.Base):
            assert contrast(QColor(color), p.color(bg)) >= AA, (theme, name, bg.name)


def test_playback_badge_text_meets_aa() -> None:
    backgrounds = re.findall(r"#playbackMode[^{]*\{[^}]*background: (#[0-9a-f]{6})", PLAYBACK_STYLE)
    assert len(backgrounds) == 2
    for bg in backgrounds:
        assert contrast(QColor("#ffffff"), QColor(bg)) >= AA, bg


def test_switching_to_dark_reaches_the_live_button(window: MainWindow, qtbot: Any) -> None:
    live = window.findChild(QPushButton, "liveButton")
    assert live is not None and live.isVisible()
    window.registry["view.dark"].trigger()
    settle(qtbot, window)
    try:
        image = live.grab().toImage()
        face = image.pixelColor(image.width() // 2, image.height() // 2)
        assert face.lightness() < 110, face.name()
        notes = window.findChild(QLabel, "playbackNotes")
        assert notes is not None
        assert notes.styleSheet() == f"color: {TEXT_ACCENTS['dark']['warning']};"
    finally:
        apply_theme("light")
