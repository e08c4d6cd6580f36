"""File → Open Store URL… (#8): a team store on a database server.

The URL and the password are asked separately; the password is joined to the URL only to
connect (``core/inspector/store_url.py:with_password``) and never written to the settings:
recent stores keep the URL without it, and reopening one brings this dialog back with the
URL filled in.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QWidget,
)

from core.errors import InvalidInputError
from core.inspector.store_url import has_password, strip_password, with_password
from ui.dialogs.form import CheckedDialog, accept_buttons, column
from ui.widgets import wrapped_label

PLACEHOLDER = "postgresql+psycopg://user@host:5432/ctxlens"
NOTE = (
    "The password is used to connect and is never saved: recent stores keep the URL "
    "without it and ask again."
)


class StoreUrlDialog(CheckedDialog):
    chosen = Signal(str)
    """The URL to open, with the password joined in (never stored)."""

    def __init__(self, url: str = "", parent: QWidget | None = None) -> None:
        super().__init__("storeUrlDialog", "Open store URL", "storeUrlError", parent)
        self.url = QLineEdit(strip_password(url))
        self.url.setObjectName("storeUrl")
        self.url.setPlaceholderText(PLACEHOLDER)
        self.url.setMinimumWidth(460)
        self.password = QLineEdit()
        self.password.setObjectName("storePassword")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setPlaceholderText("leave empty for trust or peer authentication")
        note = wrapped_label(NOTE)
        form = QFormLayout()
        form.addRow("URL", self.url)
        form.addRow("Password", self.password)
        buttons = accept_buttons(self, self._accept, ok=QDialogButtonBox.StandardButton.Open)
        column(self, form, note, self.error, buttons)
        (self.password if self.url.text() else self.url).setFocus()

    def target(self) -> str:
        """The URL with the password (a password typed into the URL field also counts)."""
        url = self.url.text().strip()
        return url if has_password(url) else with_password(url, self.password.text())

    def checked(self) -> str:
        if "://" not in self.url.text():
            raise InvalidInputError("Enter a database URL such as " + PLACEHOLDER)
        return self.target()
