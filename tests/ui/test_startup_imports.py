"""The window paints first (issue 17): what its first frame needs loads in milliseconds,
and the store, SQLAlchemy, the panes and the runtime load after that frame
(``ui/window_panes.py``). A headless command loads only its own module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.fresh_python import last_value
from ui.main_window import ROWS_WAIT_MS, MainWindow
from ui.settings import AppSettings

DEFERRED = (
    "httpx",
    "core.llm.client",
    "core.demo.scenario",
    "core.run.runner",
    "core.replay.rerun",
    "alembic",
)
#: Not loaded before the first frame: the store and what the panes read with.
AFTER_FIRST_PAINT = (
    "sqlalchemy",
    "core.store.store",
    "core.store.reader",
    "core.records",
    "core.inspector.bands",
    "core.run.live",
    "core.importers.api",
    "tiktoken",
    "pygments",
    "ui.window_panes",
    "ui.panes.traces",
    "ui.timeline.widget",
    "ui.run_controller",
    "ui.live",
)


def _loaded(code: str, names: tuple[str, ...]) -> list[str]:
    found: list[str] = last_value(
        f"import sys\n{code}\nprint([m for m in {names!r} if m in sys.modules])"
    )
    return found


def test_main_window_defers_heavy_modules() -> None:
    assert _loaded("import ui.main_window", DEFERRED) == []


def test_the_first_frame_loads_no_store_and_no_pane() -> None:
    """``app/gui.py:make_window`` as the app starts it: the frame exists, nothing else."""
    code = (
        "from app.gui import GuiOptions, make_window\n"
        "import tempfile, os\n"
        "d = tempfile.mkdtemp()\n"
        "app, w = make_window(GuiOptions(db=os.path.join(d, 'x.db'), "
        "settings=os.path.join(d, 's.ini')))\n"
        "assert not w.ready and 'traces' in w.docks and w.registry['file.open']"
    )
    assert _loaded(code, AFTER_FIRST_PAINT + DEFERRED) == []


def test_a_headless_command_loads_only_its_own_module(sample_path: Path) -> None:
    code = f"from app.cli import main\nassert main(['--db', {str(sample_path)!r}, 'traces']) == 0"
    others = ("app.commands.gui", "app.commands.run", "app.commands.search", "app.commands.fork")
    assert _loaded(code, (*others, "sqlalchemy")) == []


def test_the_window_paints_then_fills_in(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    """``paint_first``: the first frame shows the docks loading; requests made before the
    panes exist (open a store) run once they are built, and the trace shows."""
    win = MainWindow(settings, paint_first=True)
    qtbot.addWidget(win)
    assert not win.ready and not hasattr(win, "timeline")
    assert win.docks["traces"].widget().text() == "Loading…"
    assert win.open_store(sample_path)
    assert "Opening" in win.statusBar().currentMessage()
    win.show()
    qtbot.waitUntil(lambda: win.ready, timeout=20_000)
    qtbot.waitUntil(win.is_settled, timeout=20_000)
    assert win.docks["traces"].widget() is win.traces
    assert win.session.trace_id is not None and win.timeline.source is not None
    assert win.traces.model.records, "the trace list is filled"


#: Not loaded before the trace's rows are painted (issue 20): the other panes and theirs.
AFTER_THE_ROWS = (
    "ui.window_panes",
    "ui.run_controller",
    "ui.live",
    "ui.panes.detail",
    "ui.panes.traces",
    "core.run.live",
    "core.live.otlp_server",
    "pygments",
    "sqlalchemy.dialects.postgresql",
)


def test_the_rows_come_before_the_other_panes_and_their_modules(sample_path: Path) -> None:
    """``app/gui.py:make_window`` as the app starts it, on an existing store: when the
    other panes start to be built, the timeline already holds the trace's rows, their
    modules are not loaded yet and their docks say "Loading…"; then every pane fills in."""
    code = (
        "from app.gui import GuiOptions, make_window\n"
        "import tempfile, os, sys, time\n"
        "from PySide6.QtWidgets import QApplication\n"
        "import ui.main_window as mw\n"
        "seen = {}\n"
        "build = mw.MainWindow._build_panes\n"
        "def spy(self):\n"
        "    if not seen:\n"
        "        seen.update(rows=self.timeline.model.length, ready=self.ready,\n"
        f"            loaded=[m for m in {AFTER_THE_ROWS!r} if m in sys.modules],\n"
        "            goals=self.docks['goals'].widget().text())\n"
        "    build(self)\n"
        "mw.MainWindow._build_panes = spy\n"
        "d = tempfile.mkdtemp()\n"
        f"app, w = make_window(GuiOptions(db={str(sample_path)!r}, "
        "settings=os.path.join(d, 's.ini')))\n"
        "w.show()\n"
        "end = time.monotonic() + 60\n"
        "while not w.is_settled() and time.monotonic() < end:\n"
        "    app.processEvents(); time.sleep(0.005)\n"
        "assert seen == {'rows': w.timeline.model.length, 'ready': False, 'loaded': [], "
        "'goals': 'Loading…'}, seen\n"
        "assert seen['rows'] > 0 and w.is_settled() and w.traces.model.records\n"
        "assert w.docks['goals'].widget() is w.goals\n"
        "assert w.detail.detail.message.sequence == w.timeline.selected_sequence()\n"
        "w.close()\n"
    )
    server_only = "sqlalchemy.dialects.postgresql"  # a SQLite store never loads it
    assert _loaded(code, AFTER_THE_ROWS) == [m for m in AFTER_THE_ROWS if m != server_only]


def test_the_gui_command_starts_its_window_before_the_store_loads(sample_path: Path) -> None:
    """``ctxlens gui`` on an existing store reaches ``app/gui.py:launch`` (which paints the
    frame first) without SQLAlchemy or the store's modules loaded."""
    code = (
        "import app.gui\n"
        "seen = []\n"
        "app.gui.launch = lambda opts: seen.append(sorted(\n"
        f"    m for m in {AFTER_FIRST_PAINT!r} if m in sys.modules)) or 0\n"
        "from app.cli import main\n"
        f"assert main(['--db', {str(sample_path)!r}, 'gui']) == 0\n"
        "assert seen == [[]], seen\n"
    )
    assert _loaded(code, ()) == []


def test_a_window_closed_before_its_rows_never_builds_the_panes(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    win = MainWindow(settings, paint_first=True)
    qtbot.addWidget(win)
    win.open_store(sample_path)
    win.show()
    qtbot.waitUntil(lambda: win.timeline_built, timeout=20_000)
    win.close()
    qtbot.wait(ROWS_WAIT_MS + 300)  # past the stage's fallback timer
    assert not win.ready and not hasattr(win, "traces")
