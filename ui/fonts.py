"""Emoji in trace content drawn as emoji, not boxes.

Qt picks an emoji font only from the families it is told about (Qt 6.9+:
``QFontDatabase.setApplicationEmojiFontFamilies``). ``use_emoji_fonts`` names the colour
emoji fonts that are installed; the ``.deb`` recommends ``fonts-noto-color-emoji``.
"""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase

EMOJI_FAMILIES = ("Noto Color Emoji", "Twemoji", "Apple Color Emoji", "Segoe UI Emoji",
                  "JoyPixels", "Symbola")  # fmt: skip


def use_emoji_fonts() -> list[str]:
    """The installed emoji families, now Qt's emoji fallback (``[]``: none installed, or a
    Qt without the API)."""
    installed = set(QFontDatabase.families())
    found = [f for f in EMOJI_FAMILIES if f in installed]
    setter = getattr(QFontDatabase, "setApplicationEmojiFontFamilies", None)
    if found and setter is not None:
        setter(found)
    return found
