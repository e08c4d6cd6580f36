"""Where ctxlens keeps its files when the user does not say (no Qt needed)."""

from __future__ import annotations

import os
from pathlib import Path

APP_ICON = "icons/ctxlens.svg"


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ctxlens"


def default_db() -> str:
    """``$CTXLENS_DB`` if set, else the embedded default store in the user data folder."""
    env = os.environ.get("CTXLENS_DB")
    if env:
        return env
    return str(data_dir() / "ctxlens.db")


def app_icon() -> Path:
    """The SVG app icon shipped in ``resources/icons`` (window icon, desktop entry)."""
    from importlib import resources

    return Path(str(resources.files("resources").joinpath(APP_ICON)))
