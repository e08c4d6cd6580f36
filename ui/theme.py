"""Light and dark palettes, plus the few accent colours item delegates draw with."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from ui.widgets import wrapped_label

ROLE_COLORS = {
    "system": "#7c6f64",
    "user": "#2f7ed8",
    "assistant": "#2e9d62",
    "tool": "#c07a12",
}

BADGE_COLORS = {
    "error": "#c0392b",
    "injected_context": "#1f9bb0",
    "injected_skill": "#8a5cd1",
    "summary": "#b04a9c",
    "nudge": "#c9842a",
    "compaction_call": "#a458c9",
    "side_branch": "#5f7f99",
    "subagent": "#3d8f8f",
    "placeholder": "#8a8a8a",
    "grant": "#d1495b",
    "abandoned": "#b0554a",
}

BAND_COLORS = {"goal": "#d9a520", "summary": "#a458c9"}
BAND_DEFAULT = "#6b8fb3"

COMPONENT_COLORS = {
    "system": "#7c6f64",
    "injected_context": "#1f9bb0",
    "skills": "#8a5cd1",
    "goal_messages": "#d9a520",
    "tool_output": "#c07a12",
    "summary": "#b04a9c",
    "granted_refs": "#d1495b",
    "conversation": "#2f7ed8",
    "images_estimated": "#5fa36b",
    "not_in_transcript": "#9aa5b1",
}
"""``images_estimated``: the estimated tokens of the context's images (they have no text to
count); ``not_in_transcript``: recorded prompt tokens the transcript does not hold (an
import's system prompt, tool definitions and other parts the tool did not log), drawn after
the components ctxlens counts."""


def palette(theme: str) -> QPalette:
    if theme != "dark":
        app = QApplication.instance()
        p = app.style().standardPalette() if isinstance(app, QApplication) else QPalette()
        # Fusion's defaults miss WCAG AA: placeholder/dim text is black at 50 % (3.9:1 on
        # the window), white on its highlight blue 3.7:1
        p.setColor(QPalette.ColorRole.PlaceholderText, QColor("#5f6368"))
        p.setColor(QPalette.ColorRole.Highlight, QColor("#2b6cb0"))
        p.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
        return p
    p = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#25272b",
        QPalette.ColorRole.WindowText: "#e4e6ea",
        QPalette.ColorRole.Base: "#1c1d20",
        QPalette.ColorRole.AlternateBase: "#24262a",
        QPalette.ColorRole.ToolTipBase: "#2f3237",
        QPalette.ColorRole.ToolTipText: "#e4e6ea",
        QPalette.ColorRole.Text: "#e4e6ea",
        QPalette.ColorRole.Button: "#2f3237",
        QPalette.ColorRole.ButtonText: "#e4e6ea",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#3b6fb6",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#6aa7ff",
        QPalette.ColorRole.PlaceholderText: "#8b9098",
        QPalette.ColorRole.Mid: "#3a3d43",
        QPalette.ColorRole.Dark: "#151618",
    }
    for role, value in colors.items():
        p.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6d7178"))
    return p


def apply_theme(theme: str) -> None:
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.setStyle("Fusion")
        app.setPalette(palette(theme))
        for widget in app.allWidgets():
            _restyle(widget, theme)


def _restyle(widget: QWidget, theme: str) -> None:
    """Widgets under a style sheet keep the palette they were polished with (the Live
    button stayed white in the dark theme): setting the sheet again re-polishes them.
    An accent (``set_accent``) gets its colour for ``theme``."""
    accent = widget.property(ACCENT_PROPERTY)
    if isinstance(accent, str) and accent in TEXT_ACCENTS[theme]:
        widget.setStyleSheet(f"color: {TEXT_ACCENTS[theme][accent]};")
    elif widget.styleSheet():
        widget.setStyleSheet(widget.styleSheet())


#: Text colours that meet WCAG AA (4.5:1) on both the window and base colours of a theme.
TEXT_ACCENTS = {
    "light": {"error": "#b3261e", "warning": "#8a4b00"},
    "dark": {"error": "#ff8a80", "warning": "#f0b45a"},
}
ACCENT_PROPERTY = "ctxlensAccent"


def set_accent(widget: QWidget, accent: str) -> None:
    """Colour ``widget``'s text as an ``error`` or ``warning`` in the current theme, and
    again whenever the theme changes."""
    widget.setProperty(ACCENT_PROPERTY, accent)
    app = QApplication.instance()
    dark = isinstance(app, QApplication) and is_dark(app.palette())
    _restyle(widget, "dark" if dark else "light")


def accent_note(name: str, accent: str) -> QLabel:
    """A hidden, word-wrapped line for an ``error`` or a ``warning`` in its accent colour
    (a dialog shows it when it has something to say)."""
    label = wrapped_label(name=name)
    set_accent(label, accent)
    label.setVisible(False)
    return label


def is_dark(p: QPalette) -> bool:
    return p.color(QPalette.ColorRole.Base).lightness() < 128
