"""A file the importer cannot place: the window says so in its own words (no "--format")
and offers the format choice; importing again uses the chosen format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.conftest import settle
from ui.main_window import MainWindow


def test_unknown_format_offers_the_choice_and_retries_with_it(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    odd = tmp_path / "notes.dat"
    odd.write_text("just some notes, not a trace\n", encoding="utf-8")
    with qtbot.waitSignal(window.importer.finished, timeout=30_000) as sig:
        window.import_paths([str(odd)])
    (row,) = sig.args[0].rows
    assert row.status == "error" and "known format" in row.detail
    dialog = window.importer.dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    text = dialog.errors.toPlainText()
    assert "--format" not in text and "choose its format below" in text
    assert dialog.retry_row.isVisible() and dialog.unknown == [str(odd)]
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("openai"))
    with qtbot.waitSignal(window.importer.finished, timeout=30_000) as again:
        dialog.retry_button.click()
    (retried,) = again.args[0].rows
    assert retried.format == "openai", "the chosen format reached the importer"
    assert "known format" not in retried.detail
    settle(qtbot, window)
