"""Light and dark palettes, plus the few accent colours item delegates draw with."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

ROLE_COLORS = {
    "system": "#7c6f64",
    "user": "#2f7ed8",
    "assistant": "#2e9d62",
    "tool": "#c07a12",
}

BADGE_COLORS = {
    "injected_context": "#1f9bb0",
    "injected_skill": "#8a5cd1",
    "summary": "#b04a9c",
    "nudge": "#c9842a",
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
    "not_in_transcript": "#9aa5b1",
}
"""``not_in_transcript``: recorded prompt tokens the transcript does not hold (an import's
system prompt and tool definitions), drawn after the components ctxlens counts."""


def palette(theme: str) -> QPalette:
    if theme != "dark":
        app = QApplication.instance()
        return app.style().standardPalette() if isinstance(app, QApplication) else QPalette()
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


def is_dark(p: QPalette) -> bool:
    return p.color(QPalette.ColorRole.Base).lightness() < 128
