"""Window settings (geometry, dock layout, theme, recent stores) in one INI file.

The file lives in the user's config folder by default; tests pass a temporary path (and
turn on ``QStandardPaths`` test mode) so they never read or write a developer's settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, QStandardPaths

from core.inspector.store_url import strip_password

MAX_RECENT = 8


class AppSettings:
    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            base = QStandardPaths.writableLocation(
                QStandardPaths.StandardLocation.AppConfigLocation
            )
            path = Path(base or ".") / "ctxlens.ini"
        self.path = Path(path)
        self.qs = QSettings(str(self.path), QSettings.Format.IniFormat)

    def get(self, key: str, default: Any = None) -> Any:
        return self.qs.value(key, default)

    def set(self, key: str, value: Any) -> None:
        self.qs.setValue(key, value)

    def sync(self) -> None:
        self.qs.sync()

    # -- typed accessors -----------------------------------------------------------------
    @property
    def theme(self) -> str:
        value = self.get("view/theme", "light")
        return value if value in ("light", "dark") else "light"

    @theme.setter
    def theme(self, value: str) -> None:
        self.set("view/theme", value)

    def recent_stores(self) -> list[str]:
        value = self.get("files/recent_stores", [])
        if isinstance(value, str):
            value = [value]
        return [strip_password(str(v)) for v in value or []]

    def add_recent_store(self, path: str) -> list[str]:
        """Remember a store; a server URL is kept without its password, always."""
        path = strip_password(path)
        items = [path] + [p for p in self.recent_stores() if p != path]
        self.set("files/recent_stores", items[:MAX_RECENT])
        return items[:MAX_RECENT]

    def window_state(self) -> tuple[QByteArray | None, QByteArray | None]:
        return self.get("window/geometry"), self.get("window/state")

    def save_window_state(self, geometry: QByteArray, state: QByteArray) -> None:
        self.set("window/geometry", geometry)
        self.set("window/state", state)
