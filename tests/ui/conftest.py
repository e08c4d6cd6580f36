"""Qt fixtures: settings in a temp file, the sample store, the real window, leak checks."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("PySide6")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QApplication, QComboBox, QWidget

from core.records import Trace
from core.store import Store
from tests.sample_trace import write_sample
from tests.ui.leaks import LeakWatch, install, top_level_keys
from ui.settings import AppSettings


@pytest.fixture(autouse=True)
def _qt_test_mode() -> None:
    QStandardPaths.setTestModeEnabled(True)


@pytest.fixture
def leak_watch(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[LeakWatch]:
    """Fails the test when it leaves widgets, timers, threads or asyncio tasks behind."""
    watch = LeakWatch(widgets_before=top_level_keys())
    original = qtbot.addWidget

    def add_widget(widget: QWidget, **kw: Any) -> None:
        watch.handled.add(widget)
        original(widget, **kw)

    monkeypatch.setattr(qtbot, "addWidget", add_widget)
    install(watch, monkeypatch)
    yield watch
    leaks = watch.leaks()
    for w in watch.leaked_widgets():
        w.close()
        w.deleteLater()
    assert not leaks, "test leaked Qt/async resources:\n" + "\n".join(leaks)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Every Qt test gets the leak checks (like napari's dangling-object fixtures)."""
    names: list[str] = getattr(item, "fixturenames", [])
    if ("qtbot" in names or "qapp" in names) and "leak_watch" not in names:
        names.insert(0, "leak_watch")


@pytest.fixture
def settings(tmp_path: Path) -> AppSettings:
    return AppSettings(tmp_path / "settings.ini")


@pytest.fixture
def sample_path(tmp_path: Path) -> Path:
    path = tmp_path / "sample.db"
    with Store.open(path) as s:
        write_sample(s)
    return path


@pytest.fixture
def sample_trace(sample_path: Path) -> Trace:
    with Store.open(sample_path) as s:
        return s.traces()[0]


@pytest.fixture
def window(qtbot: Any, settings: AppSettings, sample_path: Path) -> Any:
    return open_window(qtbot, settings, sample_path)


def open_window(
    qtbot: Any,
    settings: AppSettings,
    db: Path,
    size: tuple[int, int] = (1600, 1000),
    trace: str | None = None,
) -> Any:
    """The real window, shown, with the store at ``db`` open (at ``trace``, else the
    window's own choice) and settled."""
    from ui.main_window import MainWindow

    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    assert win.open_store(db, trace)
    settle(qtbot, win)
    return win


def show_message(qtbot: Any, win: Any, sequence: int) -> Any:
    """Select message ``sequence`` in the timeline as a click does and wait until the
    Message pane shows it (and the pane's new height is laid out); the pane."""
    pane = win.detail
    assert win.timeline.select_sequence(sequence)
    qtbot.waitUntil(
        lambda: pane.detail is not None and pane.detail.message.sequence == sequence,
        timeout=20_000,
    )
    qtbot.wait(50)  # the area's new height is laid out on the next turn
    return pane


def choose(editor: Any, value: Any) -> None:
    """Set ``editor`` as a user picking ``value`` would: a combo box to the item whose data
    it is, a spin box to it (the same change signals fire)."""
    if isinstance(editor, QComboBox):
        index = editor.findData(value)
        assert index >= 0, f"{editor.objectName()}: no item {value!r}"
        editor.setCurrentIndex(index)
    else:
        editor.setValue(value)


def preview_auto_at(qtbot: Any, win: Any, share: float) -> tuple[Any, Any]:
    """Open the Compact dialog from its action, pick auto, type ``share`` as the threshold
    and wait for the dry run that edit starts: ``(dialog, CompactPreview)``."""
    from ui.dialogs.compact import CompactDialog

    with qtbot.waitSignal(win.registry["run.compact"].triggered):
        win.registry["run.compact"].trigger()
    dialog = win.compact_dialog
    assert isinstance(dialog, CompactDialog)
    qtbot.waitUntil(lambda: dialog.current is not None, timeout=30_000)
    choose(dialog.level, "auto")
    dialog.threshold_box.setValue(share)
    with qtbot.waitSignal(dialog.previewed, timeout=30_000) as sig:
        dialog.threshold_box.editingFinished.emit()
    return dialog, sig.args[0]


def settle(qtbot: Any, win: Any) -> None:
    qtbot.waitUntil(win.is_settled, timeout=20_000)
    qtbot.wait(10)
    qtbot.waitUntil(win.is_settled, timeout=20_000)


@pytest.fixture
def qloop(qapp: QApplication, leak_watch: LeakWatch) -> Iterator[qasync.QEventLoop]:
    """The window's asyncio loop, as ``app/gui.py`` runs it (tests call
    ``run_until_complete``). At the end no task may be pending; then the loop is closed and
    its Qt timers killed here, on the main thread (see ``close_loop``)."""
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    leak_watch.loops.append(loop)
    try:
        yield loop
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        assert not pending, f"pending asyncio tasks: {pending}"
    finally:
        close_loop(loop)


def close_loop(loop: qasync.QEventLoop) -> None:
    """Close a qasync loop for good. Its cancelled ``call_later`` handles (HTTP timeouts,
    sleeps) keep Qt timers registered until they would have fired; if the loop's timer
    object were later garbage-collected on another thread (a worker that happens to run
    the collector), Qt could not unregister them and a later timer event would hit freed
    memory. So kill them now, on the thread that owns them."""
    loop.close()
    asyncio.set_event_loop(None)
    timer = loop._timer
    callbacks: dict[int, object] = timer._SimpleTimer__callbacks
    for timer_id in list(callbacks):
        timer.killTimer(timer_id)
    callbacks.clear()
