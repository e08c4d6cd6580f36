"""Importing from the window: the File menu, drag and drop, progress, cancel, bad files."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from core.inspector.imports import ImportReport
from core.store import Store
from tests.conftest import TRACES
from tests.ui.conftest import settle
from ui.dialogs.imports import CountProgress
from ui.main_window import MainWindow

BASIC = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
BIG = next(TRACES.glob("claude_code/marot__spotter/**/258c7280-*.jsonl"), None)

pytestmark = pytest.mark.skipif(not BASIC.is_file() or BIG is None, reason="shared traces missing")


def _trace_ids(path: Path) -> set[str]:
    with Store.open(path) as s:
        return {t.id for t in s.traces()}


def test_file_menu_import_with_progress_selects_the_new_trace(
    window: MainWindow, qtbot: Any, sample_path: Path
) -> None:
    before = _trace_ids(sample_path)
    progress: list[object] = []
    window.runner.progress.connect(lambda _label, value: progress.append(value))
    window.registry["file.import"].trigger()
    dialog = window.file_dialog
    assert isinstance(dialog, QFileDialog)
    qtbot.waitUntil(dialog.isVisible)
    with qtbot.waitSignal(window.importer.finished, timeout=60_000) as sig:
        dialog.filesSelected.emit([str(BASIC)])  # what choosing the file and "Open" sends
        dialog.reject()
    report = sig.args[0]
    settle(qtbot, window)
    new = _trace_ids(sample_path) - before
    assert len(new) == 1 and report.new_traces == list(new)
    (trace_id,) = new
    assert window.session.trace_id == trace_id, "the imported trace is shown"
    assert trace_id in {t.id for t in window.traces.model.records}
    assert window.timeline.model.length > 0
    # bytes read, then the stored traces (shown at once), then their token counts filled in
    read = [p for p in progress if isinstance(p, tuple)]
    assert read and all(p[0] <= p[1] for p in read) and read[-1][0] == read[-1][1]
    (stored,) = [i for i, p in enumerate(progress) if isinstance(p, ImportReport)]
    assert progress[stored].new_traces == [trace_id]  # type: ignore[union-attr]
    counted = [p for p in progress if isinstance(p, CountProgress)]
    assert counted and all(p.done <= p.total for p in counted)
    assert counted[-1].done == counted[-1].total > 0
    assert progress.index(counted[0]) > stored > progress.index(read[-1])
    importer = window.importer.dialog
    assert importer is not None and not importer.isVisible(), "a clean import closes itself"
    assert "Imported 1 trace" in window.statusBar().currentMessage()


def test_drop_onto_the_window_imports(window: MainWindow, qtbot: Any, sample_path: Path) -> None:
    before = _trace_ids(sample_path)
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(BASIC))])
    action = Qt.DropAction.CopyAction
    enter = QDragEnterEvent(QPoint(200, 200), action, data, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)  # fmt: skip
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(200, 200), action, data, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)  # fmt: skip
    with qtbot.waitSignal(window.importer.finished, timeout=60_000):
        QApplication.sendEvent(window, drop)
    settle(qtbot, window)
    assert len(_trace_ids(sample_path) - before) == 1


def test_cancel_mid_file_leaves_nothing_partial(
    window: MainWindow, qtbot: Any, sample_path: Path
) -> None:
    assert BIG is not None
    before = _trace_ids(sample_path)
    paused, release = threading.Event(), threading.Event()

    def pause_once(done: int, total: int) -> None:  # runs on the worker thread
        if 0 < done < total and not paused.is_set():
            paused.set()
            release.wait(10)

    window.importer.on_worker_progress = pause_once
    assert window.import_paths([str(BIG)])
    dialog = window.importer.dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(paused.is_set, timeout=20_000)
    qtbot.waitUntil(lambda: "read" in dialog.bytes.text(), timeout=10_000)  # progress shown
    dialog.cancel_button.click()
    assert dialog.cancel_button.text() == "Cancelling…"
    with qtbot.waitSignal(window.importer.finished, timeout=60_000) as sig:
        release.set()
    report = sig.args[0]
    settle(qtbot, window)
    assert report.cancelled and [r.status for r in report.rows] == ["not imported (cancelled)"]
    assert _trace_ids(sample_path) == before, "nothing partial was written"
    assert dialog.isVisible() and dialog.table.isVisible(), "the outcome is listed"
    assert window.timeline.model.length > 0, "the window still shows its trace"


def test_bad_file_is_listed_and_the_store_is_unchanged(
    window: MainWindow, qtbot: Any, sample_path: Path, tmp_path: Path
) -> None:
    assert BIG is not None
    bad = tmp_path / "cut.jsonl"
    data = BIG.read_bytes()
    bad.write_bytes(data[: len(data) // 3])
    before = _trace_ids(sample_path)
    shown = window.session.trace_id
    with qtbot.waitSignal(window.importer.finished, timeout=60_000) as sig:
        window.import_paths([str(bad)])
    report = sig.args[0]
    settle(qtbot, window)
    assert [r.status for r in report.rows] == ["error"] and "cut.jsonl" in report.rows[0].detail
    assert _trace_ids(sample_path) == before
    dialog = window.importer.dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    assert dialog.model.rowCount() == 1 and "cut.jsonl" in dialog.errors.toPlainText()
    assert window.session.trace_id == shown, "the window keeps showing what it showed"
    window.registry["file.reload"].trigger()  # still usable
    settle(qtbot, window)
    assert window.timeline.model.length > 0
