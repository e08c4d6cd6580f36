"""The start's first rows without SQLAlchemy (issue 20): on a current SQLite store the
timeline shows the trace's rows read with ``sqlite3`` (``ui/window_timeline.py:first_rows``),
then the ``Store`` opens and takes over without a reset; an old store still migrates, a
trace that is not there is still reported, and live refresh, search and the panes work."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine

from core.inspector.timeline import READ_CHARS, row_of
from core.records import NewMessage
from core.store import Store
from core.store.first_page import QuickStore
from core.store.migrate import upgrade
from tests.helpers.fresh_python import last_value
from tests.sample_trace import write_sample
from ui import window_timeline
from ui.main_window import MainWindow
from ui.settings import AppSettings
from ui.timeline.model import RowRole


def _start(qtbot: Any, settings: AppSettings, db: Path, trace: str | None = None) -> MainWindow:
    """The window as ``app/gui.py:make_window`` starts it, with the first load recorded."""
    win = MainWindow(settings, paint_first=True)
    qtbot.addWidget(win)
    win.resize(1200, 800)
    seen: list[tuple[str, bool]] = []
    told: list[int] = []
    build = window_timeline.build_timeline

    def build_and_listen(w: MainWindow) -> None:
        """Listen as the timeline is made: its first load can end before a test that
        waits for ``timeline_built`` gets to connect (the first rows were missed)."""
        build(w)
        w.timeline.loaded.connect(
            lambda: seen.append((type(w.timeline.model.store).__name__, w.session.store is None))
        )
        w.timeline.main_path_loaded.connect(lambda: told.append(1))

    window_timeline.build_timeline = build_and_listen  # type: ignore[assignment]
    try:
        win.open_store(db, trace)
        win.show()
        qtbot.waitUntil(lambda: win.timeline_built, timeout=20_000)
    finally:
        window_timeline.build_timeline = build
    win.first_loads = seen  # type: ignore[attr-defined]
    win.panes_told = told  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: win.ready, timeout=30_000)
    qtbot.waitUntil(win.is_settled, timeout=30_000)
    return win


def _shown(win: MainWindow) -> list[Any]:
    model = win.timeline.model
    rows = [model.index(i).data(RowRole) for i in range(model.rowCount())]
    return [r for r in rows if hasattr(r, "preview")]


def test_the_first_rows_come_without_the_store_which_then_takes_over(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    win = _start(qtbot, settings, sample_path)
    assert win.first_loads[0] == ("QuickStore", True)  # type: ignore[attr-defined]
    store = win.session.store
    assert store is not None and win.timeline.model.store is store, "the Store took over"
    assert win.timeline.model.membership is not None, "the context shading came with it"
    assert len(win.panes_told) == 1, "the panes load the path once"  # type: ignore[attr-defined]
    trace = store.traces()[-1]
    assert win.session.trace_id == trace.id
    with store.read() as r:
        segs = r.segments(trace.id)
        n = sum(len(s) for s in segs)
        expected = [row_of(p) for p in r.main_path_previews(trace.id, 0, n, segs, READ_CHARS)]
    assert [r.sequence for r in _shown(win)] == [r.sequence for r in expected]
    assert win.timeline.selected_sequence() == trace.head
    assert win.detail.detail.message is not None
    assert win.detail.detail.message.sequence == trace.head

    # live refresh: a message written elsewhere shows up (rows inserted, no reset)
    with Store.open(sample_path) as other, other.write() as w:
        w.append(trace.id, [NewMessage("user", "written while the window is open")])
    before = win.timeline.model.length
    win.session.refresh()
    qtbot.waitUntil(lambda: win.timeline.model.length == before + 1, timeout=20_000)

    # reopening the store (F5) tells the panes again and reads through the new store
    told = len(win.panes_told)  # type: ignore[attr-defined]
    win.reload()
    qtbot.waitUntil(lambda: len(win.panes_told) > told, timeout=20_000)  # type: ignore[attr-defined]
    qtbot.waitUntil(win.is_settled, timeout=20_000)
    assert win.session.store is not store and win.timeline.model.store is win.session.store

    # search and its filter
    win.timeline.search_box.setText("date")
    win.timeline.run_search()
    qtbot.waitUntil(lambda: win.timeline.result is not None, timeout=20_000)
    assert win.timeline.result is not None and win.timeline.result.hits
    win.timeline.only_matches.setChecked(True)
    assert win.timeline.model.rowCount() == len(win.timeline.result.on_path)
    win.close()


def test_an_old_store_still_migrates(qtbot: Any, settings: AppSettings, tmp_path: Path) -> None:
    """A store one migration behind (``0014_trace_totals``'s downgrade, done by hand) is
    opened by the ``Store``, which migrates it, and its trace shows."""
    old = tmp_path / "old.db"
    with Store.open(old) as s:
        trace = write_sample(s)
    con = sqlite3.connect(old)
    con.execute("DROP TABLE trace_totals")
    con.execute("UPDATE alembic_version SET version_num = '0013_checkpoint_blobs'")
    con.commit()
    con.close()
    assert QuickStore.open(old) is None
    win = _start(qtbot, settings, old)
    assert win.first_loads[0][0] == "Store"  # type: ignore[attr-defined]
    assert win.session.trace_id == trace.id and _shown(win)
    assert QuickStore.open(old) is not None, "migrated to the head"
    win.close()


def test_a_store_without_tables_still_migrates(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    old = tmp_path / "empty.db"
    upgrade(create_engine(f"sqlite:///{old}"), "0001_initial")
    assert QuickStore.open(old) is None
    win = _start(qtbot, settings, old)
    assert win.session.store is not None and QuickStore.open(old) is not None, "migrated"
    assert win.first_loads == []  # type: ignore[attr-defined]  # no trace in it
    win.close()


def test_a_trace_that_is_not_there_is_reported(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    win = _start(qtbot, settings, sample_path, trace="no-such-trace")
    assert win.first_loads[0][0] == "Store"  # type: ignore[attr-defined]  # the Store read it
    assert win.last_error is not None and "no-such-trace" in win.last_error.text()
    assert win.session.store is not None
    assert win.session.trace_id == win.session.store.traces()[-1].id
    win.close()


def test_a_trace_asked_for_by_prefix_opens_without_the_store(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "two.db"
    with Store.open(db) as s:
        first = write_sample(s, "first")
        write_sample(s, "second")
    win = _start(qtbot, settings, db, trace=first.id[:8])
    assert win.first_loads[0] == ("QuickStore", True)  # type: ignore[attr-defined]
    assert win.session.trace_id == first.id and win.last_error is None
    win.close()


def test_the_rows_are_painted_before_sqlalchemy_loads(sample_path: Path) -> None:
    code = (
        "import os, sys, tempfile, time\n"
        "from app.gui import GuiOptions, make_window\n"
        "import ui.main_window as mw\n"
        "seen = []\n"
        "painted = mw.MainWindow._rows_painted\n"
        "def spy(self):\n"
        "    seen.append((self.timeline.model.length, self.timeline.loading,\n"
        "                 'sqlalchemy' in sys.modules))\n"
        "    painted(self)\n"
        "mw.MainWindow._rows_painted = spy\n"
        f"app, w = make_window(GuiOptions(db={str(sample_path)!r}, "
        "settings=os.path.join(tempfile.mkdtemp(), 's.ini')))\n"
        "w.show()\n"
        "end = time.monotonic() + 60\n"
        "while not w.is_settled() and time.monotonic() < end:\n"
        "    app.processEvents(); time.sleep(0.005)\n"
        "assert w.is_settled()\n"
        "print((seen, 'sqlalchemy' in sys.modules))\n"
    )
    seen, after = last_value(code)
    (rows, loading, loaded), *_ = seen
    assert rows > 0 and not loading and not loaded
    assert after is True, "the Store opened after the rows"
