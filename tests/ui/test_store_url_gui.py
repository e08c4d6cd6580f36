"""File → Open Store URL…: a clear error for a server that is not there; passwords never saved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDialogButtonBox, QMessageBox

from core.inspector.store_url import with_password
from tests.ui.conftest import settle
from ui.dialogs.store_url import StoreUrlDialog
from ui.main_window import MainWindow
from ui.settings import AppSettings

UNREACHABLE = "postgresql+psycopg://nobody@127.0.0.1:1/nothing"


def _url_dialog(window: MainWindow, qtbot: Any) -> StoreUrlDialog:
    window.registry["file.open_url"].trigger()
    dialog = window.url_dialog
    assert isinstance(dialog, StoreUrlDialog)
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def _open(dialog: StoreUrlDialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Open).click()  # type: ignore[union-attr]


def test_unreachable_server_gives_an_error_and_keeps_the_window(
    window: MainWindow, qtbot: Any, sample_path: Path
) -> None:
    shown = window.session.trace_id
    dialog = _url_dialog(window, qtbot)
    dialog.url.setText(UNREACHABLE)
    dialog.password.setText("hunter2")
    _open(dialog)
    qtbot.waitUntil(lambda: window.last_error is not None, timeout=30_000)
    box = window.last_error
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert box is not None and box.windowTitle() == "Cannot open store"
    assert "cannot open store" in box.text() and "127.0.0.1" in box.text()
    assert "hunter2" not in box.text(), "the password is never shown"
    box.close()
    settle(qtbot, window)
    assert window.session.store is not None and window.session.store.path == sample_path
    assert window.session.trace_id == shown and window.timeline.model.length > 0
    assert UNREACHABLE not in window.settings.recent_stores(), "only opened stores are recent"


def test_not_a_url_is_refused_in_the_dialog(window: MainWindow, qtbot: Any) -> None:
    dialog = _url_dialog(window, qtbot)
    dialog.url.setText("just some words")
    _open(dialog)
    assert dialog.isVisible() and dialog.error.isVisible() and "URL" in dialog.error.text()
    dialog.reject()


def test_password_is_used_but_never_saved(
    window: MainWindow, qtbot: Any, pg_url: str, settings: AppSettings
) -> None:
    secret = "s3cret-pass"  # the test cluster trusts local connections; the URL carries it
    dialog = _url_dialog(window, qtbot)
    dialog.url.setText(pg_url)
    dialog.password.setText(secret)
    assert dialog.target() == with_password(pg_url, secret)
    _open(dialog)
    qtbot.waitUntil(
        lambda: window.session.store is not None and window.session.store.path is None,
        timeout=30_000,
    )
    settle(qtbot, window)  # an empty store: settled once nothing runs
    assert window.traces.model.rowCount() == 0, "a fresh team store has no traces"
    recent = window.settings.recent_stores()
    assert recent[0] == pg_url and all(secret not in r for r in recent)
    window.settings.sync()
    assert secret not in settings.path.read_text()
    assert secret not in window.windowTitle()
    # reopening from the recent list asks for the password again
    action = window.recent_menu.actions()[0]
    assert action.text() == pg_url
    action.trigger()
    again = window.url_dialog
    assert isinstance(again, StoreUrlDialog) and again is not dialog
    qtbot.waitUntil(again.isVisible)
    assert again.url.text() == pg_url and again.password.text() == ""
    again.reject()
