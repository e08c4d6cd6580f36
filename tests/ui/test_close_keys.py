"""Esc and Ctrl+W close the comparison window; Ctrl+W (and Esc, as any dialog) close the
re-run dialog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from core.store import Store
from tests.ui.conftest import settle
from ui.replay.compare_view import ComparisonWindow
from ui.replay.rerun_dialog import RerunDialog
from ui.tasks import TaskRunner


def _active(qtbot: Any, widget: QWidget) -> None:
    widget.show()
    widget.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is widget)


@pytest.mark.parametrize(
    "key, modifier",
    [
        (Qt.Key.Key_Escape, Qt.KeyboardModifier.NoModifier),
        (Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier),
    ],
)
def test_keys_close_the_comparison_window(
    qtbot: Any, sample_path: Path, key: Qt.Key, modifier: Qt.KeyboardModifier
) -> None:
    store = Store.open(sample_path)
    runner = TaskRunner()
    try:
        tid = store.traces()[0].id
        view = ComparisonWindow(store, runner, tid, tid)
        qtbot.addWidget(view)
        _active(qtbot, view)
        qtbot.keyClick(view, key, modifier)
        qtbot.waitUntil(lambda: not view.isVisible())
    finally:
        qtbot.waitUntil(lambda: not runner.busy, timeout=20_000)
        runner.shutdown()
        store.close()


def test_ctrl_w_closes_the_rerun_dialog(qtbot: Any, window: Any) -> None:
    trace = window.session.store.trace(window.session.trace_id)
    dialog = RerunDialog(window.session.store, window.runner, trace, parent=window)
    qtbot.addWidget(dialog)
    _active(qtbot, dialog)
    qtbot.keyClick(dialog, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    settle(qtbot, window)
