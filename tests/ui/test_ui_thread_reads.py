"""The window never reads the store on the UI thread to open a trace or select a message
(issue 19 item 9), and the panes built after the rows fill in with what a window built at
once shows (``ui/window_panes.py:STEPS``, ``ui/preload.py``).

The reads are caught where every one of them passes: ``Store.read`` (``Store.trace`` and
``Store.traces`` go through it), wrapped to note each call made on the main thread."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt

from core.records import NewMessage
from core.run.config import RunConfig
from core.store import Store, store
from core.store.reader import Reader
from tests.helpers.fresh_python import last_value
from tests.sample_trace import write_long_trace, write_sample
from tests.ui.conftest import open_window, settle
from ui.main_window import PANES_LABEL, MainWindow
from ui.panes.traces import TRACE_ID_ROLE
from ui.settings import AppSettings
from ui.window_panes import DOCKED, STEPS


class UiReads:
    """Where the main thread entered ``Store.read`` while ``watching``."""

    def __init__(self) -> None:
        self.watching = False
        self.seen: list[str] = []

    def note(self) -> None:
        if self.watching and threading.current_thread() is threading.main_thread():
            frames = [f for f in traceback.extract_stack()[:-3] if "/ui/" in f.filename]
            self.seen.append(" <- ".join(f"{Path(f.filename).name}:{f.name}" for f in frames))


@pytest.fixture
def ui_reads(monkeypatch: pytest.MonkeyPatch) -> UiReads:
    reads = UiReads()
    original = store.Store.read

    @contextmanager
    def read(self: Store) -> Iterator[Reader]:
        reads.note()
        with original(self) as r:
            yield r

    monkeypatch.setattr(store.Store, "read", read)
    return reads


@pytest.fixture
def three_traces(tmp_path: Path) -> tuple[Path, list[str]]:
    """A long trace (its start is on no page in memory when its end is shown), the sample,
    and a trace the ctxlens runtime can continue (its run phase is read on opening)."""
    path = tmp_path / "three.db"
    with Store.open(path) as s:
        long = write_long_trace(s, 3000, title="long")
        sample = write_sample(s)
        ran = s.create_trace("ran before", metadata={"run_config": RunConfig().to_json()})
        s.append(ran.id, [NewMessage("user", "go on")])
    return path, [long.id, sample.id, ran.id]


def _click_trace(win: MainWindow, qtbot: Any, trace_id: str) -> None:
    """A click on the trace's row in the Traces pane, as a user makes it."""
    table = win.traces.table
    index = next(i for i in win.traces._indexes() if i.data(TRACE_ID_ROLE) == trace_id)
    table.scrollTo(index)
    at = table.visualRect(index).center()
    with qtbot.waitSignal(win.session.changed):
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=at)


def _click_row(win: MainWindow, qtbot: Any, view_row: int) -> None:
    view = win.timeline.view
    index = win.timeline.model.index(view_row)
    view.scrollTo(index)
    at: QPoint = view.visualRect(index).center()
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at)


def test_opening_traces_and_selecting_messages_reads_nothing_on_the_ui_thread(
    qtbot: Any,
    settings: AppSettings,
    three_traces: tuple[Path, list[str]],
    ui_reads: UiReads,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CTXLENS_BASE_URL", "http://127.0.0.1:9/v1")  # "ran before" can run
    path, (long_id, sample_id, ran_id) = three_traces
    win = open_window(qtbot, settings, path)
    ui_reads.watching = True
    titles = {t.id: t.title for t in win.traces.model.records}
    for trace_id in (sample_id, ran_id, long_id):
        _click_trace(win, qtbot, trace_id)
        settle(qtbot, win)
        assert win.timeline.source is not None and win.timeline.source.trace_id == trace_id
        assert f"ctxlens — {titles[trace_id]} — " in win.windowTitle()
    assert win.live.runnable is False  # the long synthetic trace cannot run
    model = win.timeline.model
    _click_row(win, qtbot, model.rowCount() - 3)  # a row on screen
    settle(qtbot, win)
    clicked = win.timeline.selected_sequence()
    assert clicked is not None and win.detail.detail is not None
    assert win.detail.detail.message.sequence == clicked
    assert model.cached_path_row(1) is None, "the path's start is on no page in memory"
    win.select_message(1)  # as a link in the detail pane or a context row does
    settle(qtbot, win)
    assert win.timeline.selected_sequence() == 1
    assert win.detail.detail.message.sequence == 1
    ui_reads.watching = False
    assert ui_reads.seen == [], "store reads on the UI thread:\n" + "\n".join(ui_reads.seen)


def test_the_run_controls_wait_for_the_phase_of_a_trace_just_opened(
    qtbot: Any,
    settings: AppSettings,
    three_traces: tuple[Path, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Between opening a runnable trace and its phase arriving (off the UI thread), Run
    and Step are off and say why; then they say what the next step is."""
    monkeypatch.setenv("CTXLENS_BASE_URL", "http://127.0.0.1:9/v1")
    path, (_long, _sample, ran_id) = three_traces
    win = open_window(qtbot, settings, path)
    win.open_trace(ran_id)
    reg = win.registry
    if win.live.reading_state:  # the read may already be back on a fast machine
        assert not reg["run.step"].isEnabled()
        assert win.run_label.text() == "Run: reading the trace's state…"
    settle(qtbot, win)
    assert reg["run.step"].isEnabled() and reg["run.run"].isEnabled()
    assert win.run_label.text() == "Step: before preparing the next context"


def _shown(win: MainWindow) -> dict[str, Any]:
    """What each pane shows, as plain values."""
    sel = win.timeline.selected_sequence()
    detail = win.detail.detail
    return {
        "traces": [t.id for t in win.traces.model.records],
        "timeline": (win.timeline.model.length, win.timeline.status.text(), sel),
        "detail": None
        if detail is None
        else (detail.message.sequence, win.detail.body.toPlainText()),
        "goals": [(n.id, n.status, n.shown_messages) for n in win.goals.model.nodes],
        "context": [(r.sequence, r.tokens) for r in win.context.rows.records],
        "calls": [win.context.calls.itemText(i) for i in range(win.context.calls.count())],
        "budget": win.budget.bar.total,
        "skills": win.skills.model.records,
        "grants": win.grants.model.records,
        "delegation": [r.trace_id for r in win.delegation.model.rows],
        "run": win.run_label.text(),
        "docks": {name: type(d.widget()).__name__ for name, d in win.docks.items()},
    }


def test_the_panes_fill_in_after_the_rows_as_a_window_built_at_once(
    qtbot: Any, settings: AppSettings, sample_path: Path, tmp_path: Path
) -> None:
    """The app's start (``paint_first``): the panes come one step at a time after their
    modules loaded off the UI thread (the status bar says so meanwhile); once idle every
    pane shows what a window built in one go shows."""
    win = MainWindow(settings, paint_first=True)
    qtbot.addWidget(win)
    said: list[str] = []
    win.runner.progress.connect(lambda label, _v: said.append(win.busy_label.text()))
    docks_at_steps: list[set[str]] = []
    step = win._pane_step

    def noting(i: int) -> None:  # what the docks show as each step starts
        docks = [win.docks[name].widget() for name in DOCKED]
        docks_at_steps.append({getattr(d, "text", str)() for d in docks})
        step(i)

    win._pane_step = noting  # type: ignore[method-assign]
    win.resize(1600, 1000)
    win.open_store(sample_path)
    win.show()
    qtbot.waitUntil(win.is_settled, timeout=30_000)
    settle(qtbot, win)
    assert any(PANES_LABEL in text for text in said), said
    assert len(docks_at_steps) == len(STEPS) + 1, "one pane per turn of the loop"
    assert all(texts == {"Loading…"} for texts in docks_at_steps), (
        "no pane is shown before it knows the store and the trace"
    )
    assert all(not hasattr(d.widget(), "text") for d in win.docks.values()), "no dock loading"
    view = win.timeline.view
    selected = view.visualRect(view.currentIndex())
    assert view.viewport().rect().contains(selected), "the head row stays on screen"
    at_once = open_window(qtbot, AppSettings(tmp_path / "other.ini"), sample_path)
    assert _shown(win) == _shown(at_once)
    assert _shown(win)["goals"] and _shown(win)["context"] and _shown(win)["skills"]


def test_the_preload_loads_no_qt_and_no_ui_module() -> None:
    """``ui/preload.py`` runs on a worker thread: what it imports must not be Qt code."""
    probe = (
        "import sys\n"
        "from ui.preload import modules_for, preload\n"
        "n = preload('ui.window_panes')\n"
        "qt = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync')]\n"
        "ui = [m for m in sys.modules if m.startswith('ui.') and m != 'ui.preload']\n"
        "names = [m for m, _ in modules_for('ui.window_panes')]\n"
        "print(repr((n, qt, ui, 'core.run.live' in names, 'pygments.lexers' in names)))\n"
    )
    n, qt, ui, runtime, pygments = last_value(probe, offscreen=False)
    assert n > 20 and runtime and pygments
    assert qt == [] and ui == []
