"""The main window (UI-1): the timeline in the middle, dockable panes around it.

Wiring only: the actions are a table (``ui/window_actions.py``), the panes are built by
``ui/window_panes.py:build`` and read ``core`` through the shared ``Session``; this class
connects their signals and remembers layout, geometry, theme and recent stores.

The window paints first (issue 17): its frame (menus, toolbar, status bar and the docks,
"Loading…") is made from modules that load in a few milliseconds. Then the trace's rows
(issue 20): after the first frame the timeline is built and the store opened
(``ui/window_timeline.py``), and only once its rows are painted do the other panes and
what they import follow (``ui/window_panes.py``; ``paint_first=True``, as ``app/gui.py``
starts it). A store opened before the timeline exists waits for it; other requests
(select a message, report a problem) wait for every pane (``when_ready``). Without
``paint_first`` (tests, scripts) everything is built at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QToolBar,
    QWidget,
)

from core.errors import CtxlensError
from core.inspector.store_url import is_server_url, strip_password
from ui.actions import ActionRegistry, Entry
from ui.busy_line import BusyLine
from ui.first_paint import after_first_paint
from ui.one_dialog import show_one
from ui.session import Session
from ui.settings import AppSettings
from ui.tasks import TaskControl, TaskRunner
from ui.theme import apply_theme
from ui.window_actions import (
    ACTIONS,
    MENUS,
    REWIND_TIP,
    RUN_TIP,
    STEP_TIP,
    SUBMENU_AFTER,
    TOOLBAR,
)
from ui.window_layout import DOCKS, LEFT, RIGHT, RIGHT_SHARE, SIZES, CentralStack, loading

if TYPE_CHECKING:
    from core.demo.options import DelegationDemoOptions
    from core.demo.scenario import DemoOptions
    from core.inspector.bands import Band
    from core.inspector.compaction import CompactPreview
    from core.inspector.imports import ImportReport
    from core.store import Store
    from ui.dialogs.compact import CompactDialog
    from ui.dialogs.imports import Importer
    from ui.dialogs.new_demo import NewDemoDialog
    from ui.dialogs.store_url import StoreUrlDialog
    from ui.export import TraceExporter
    from ui.help import HelpMenu
    from ui.live import LiveSources
    from ui.palette import CommandPalette
    from ui.panes.budget import BudgetPane
    from ui.panes.context import ContextPane
    from ui.panes.delegation import DelegationPane
    from ui.panes.detail import MessageDetailPane
    from ui.panes.goals import GoalPane
    from ui.panes.skills_grants import GrantsPane, RecordsLoader, SkillsPane
    from ui.panes.traces import TraceBrowser
    from ui.replay.install import ReplayUi
    from ui.run_controller import RunController
    from ui.search.install import SearchUi
    from ui.timeline.widget import TimelineWidget

log = logging.getLogger("ctxlens.ui")
LAYOUT_VERSION = 1
#: The other panes follow the trace's rows, or this long after the timeline when the rows
#: never come (the load failed: the error is shown).
ROWS_WAIT_MS = 3000
BUSY_TIP = "Pause the run first (F6)"
PANES_LABEL = "loading the panes"
READING_TIP = "Reading where this trace's run stands…"


class MainWindow(QMainWindow):
    timeline: TimelineWidget
    traces: TraceBrowser
    goals: GoalPane
    detail: MessageDetailPane
    context: ContextPane
    skills: SkillsPane
    grants: GrantsPane
    budget: BudgetPane
    delegation: DelegationPane
    records: RecordsLoader
    live: RunController
    importer: Importer
    exporter: TraceExporter
    replay: ReplayUi
    search_all: SearchUi
    sources: LiveSources

    def __init__(
        self, settings: AppSettings, parent: QWidget | None = None, *, paint_first: bool = False
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("ctxlens")
        self.settings = settings
        self.session = Session(self)
        self.runner = TaskRunner(self)
        self.registry = ActionRegistry(self)
        self.palette_dialog: CommandPalette | None = None
        self.compact_dialog: CompactDialog | None = None
        self.url_dialog: StoreUrlDialog | None = None
        self.demo_dialog: NewDemoDialog | None = None
        self.task_dialog: QDialog | None = None
        self.confirm_box: QMessageBox | None = None
        self.last_error: QMessageBox | None = None
        self.file_dialog: QFileDialog | None = None
        self.ready = False
        """Every pane is built (``paint_first``: after the trace's rows are painted)."""
        self.timeline_built = False
        """The timeline exists (``paint_first``: after the first frame)."""
        self._waiting: list[Callable[[], object]] = []
        self._waiting_timeline: list[Callable[[], object]] = []
        self._after_rows: Callable[[], None] | None = None
        """Opens the store once the first rows, read without it, are painted."""
        self._closed = False
        """Closed before a stage of the start ran: it no longer does."""
        self._paint_first = paint_first
        self._building = False
        """The panes are being built (``paint_first``: over several loop turns)."""
        self._opening_url: int | None = None
        self._docks_sized = False
        """The right docks got their share of the shown window (``_size_docks``)."""
        self.setAcceptDrops(True)
        self._build_frame()
        self._held: list[QAction] = []
        """Actions disabled until every pane exists (their handlers call the panes)."""
        if paint_first:
            self._hold_actions()
            after_first_paint(self, self._rows_first)
        else:
            self._build_timeline()
            self._build_panes()

    # -- construction ---------------------------------------------------------------------
    def _build_frame(self) -> None:
        """What the first frame shows: menus, toolbar, status bar, docks (loading)."""
        from ui.help import HelpMenu

        self._center = CentralStack(loading("Loading the timeline…"))  # the timeline goes here
        self.setCentralWidget(self._center)
        self._build_docks()
        self._menus = {name: self.menuBar().addMenu("&" + name) for name in MENUS}
        self.recent_menu = QMenu("Open &recent", self)
        self.registry.on_added.append(self._place)
        self.registry.add_table(ACTIONS, self)
        for i, (name, dock) in enumerate(self.docks.items(), start=1):
            self.registry.adopt(f"pane.{name}", dock.toggleViewAction(), "Panes", f"Alt+{i}")
        self.help: HelpMenu = HelpMenu(self, self.registry)
        self._build_toolbar()
        self._build_status()
        self._default_state = self.saveState(LAYOUT_VERSION)
        self._restore()

    def _build_timeline(self) -> None:
        from ui.window_timeline import build_timeline

        build_timeline(self)
        self.timeline_built = True
        waiting, self._waiting_timeline = self._waiting_timeline, []
        for request in waiting:
            request()

    def _rows_first(self) -> None:
        """After the first frame: the timeline, the store (opening it selects a trace, whose
        rows load off the UI thread), then the other panes once those rows are painted; at
        once when there is nothing to load, after ``ROWS_WAIT_MS`` when the load fails."""
        if self._closed:
            return
        self._build_timeline()
        if self.session.trace_id is None and self._after_rows is None:
            self._build_panes()
            return
        QTimer.singleShot(ROWS_WAIT_MS, self, self._build_panes)
        viewport = self.timeline.view.viewport()
        self.timeline.loaded.connect(
            lambda: after_first_paint(viewport, self._rows_painted),
            Qt.ConnectionType.SingleShotConnection,
        )

    def _rows_painted(self) -> None:
        """The rows are on screen: the store they were read without opens, then the panes."""
        opened, self._after_rows = self._after_rows, None
        if opened is not None and not self._closed:
            opened()
        self._build_panes()

    def _open_first(self, path: str | Path, trace_id: str | None) -> None:
        """The store a start opens: its trace's rows read without the ``Store`` when it is
        a current SQLite file (``ui/window_timeline.py:first_rows``), the ``Store`` after
        them; otherwise the ``Store`` at once."""
        from ui.window_timeline import first_rows, open_store

        def failed() -> None:
            self._after_rows = None
            if self._closed:
                return
            open_store(self, path, trace_id)
            if self.session.trace_id is None:  # nothing to show: the panes need not wait
                self._build_panes()

        self._after_rows = first_rows(self, path, trace_id, failed)
        if self._after_rows is None:
            open_store(self, path, trace_id)

    def _hold_actions(self) -> None:
        """Between the rows and the other panes the window takes input: the menus and the
        toolbar stay disabled until the panes they act on exist (the docks can move)."""
        for entry in self.registry.all():
            if entry.action.isEnabled() and not entry.id.startswith("pane."):
                entry.action.setEnabled(False)
                self._held.append(entry.action)

    def _build_panes(self) -> None:
        """Every pane but the timeline. ``paint_first``: off the UI thread what can be
        (``ui/preload.py``: the modules the panes read with), then one pane per turn of the
        event loop (``ui/window_panes.py:STEPS``), so the window answers input meanwhile
        (the docks say "Loading…", the status bar what is loading)."""
        if self.ready or self._closed or self._building:
            return
        self._building = True
        if not self._paint_first:
            from ui.window_panes import build

            build(self)
            self._panes_built()
            return
        from ui.preload import preload

        self.runner.submit(
            PANES_LABEL,
            lambda c: preload("ui.window_panes", c.report),
            lambda _n: self._pane_step(0),
            on_error=lambda _exc: self._pane_step(0),  # the step's import shows the error
            drain=True,  # Cancel (Esc) must not leave the window without its panes
            priority=2,
        )

    def _pane_step(self, i: int) -> None:
        if self._closed:
            return
        from ui.window_panes import STEPS

        if i == len(STEPS):
            self._panes_built()
            return
        STEPS[i](self)
        QTimer.singleShot(0, self, lambda: self._pane_step(i + 1))

    def _panes_built(self) -> None:
        from ui.window_panes import catch_up, place

        if self._paint_first:  # the app's start is over
            from ui.preload import freeze_after_start

            freeze_after_start()

        place(self)
        self._connect()
        catch_up(self)
        for action in self._held:
            action.setEnabled(True)
        self._held = []
        self._run_state()
        self.ready = True
        self.detail.set_dark(self.settings.theme == "dark")
        self._default_state = self.saveState(LAYOUT_VERSION)
        saved = self.settings.window_state()[1]
        if isinstance(saved, QByteArray):
            self.restoreState(saved, LAYOUT_VERSION)
        waiting, self._waiting = self._waiting, []
        for request in waiting:
            request()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._docks_sized:
            self._docks_sized = True
            QTimer.singleShot(0, self, self._size_docks)  # dropped if the window goes first

    def _size_docks(self) -> None:
        """Give the Message and Context docks ``RIGHT_SHARE`` of the shown window. The
        sizes set while the docks were built (``SIZES``) do not hold for a window not yet
        shown: the right docks kept their least width, 276 px at any window size, where
        the Context pane's tokens and the Message facts were cut (screenshot review). A
        layout the user saved is restored over this once the panes are built."""
        if self._closed:
            return
        width = max(
            self.docks["detail"].minimumSizeHint().width(), round(self.width() * RIGHT_SHARE)
        )
        self.resizeDocks([self.docks["detail"]], [width], Qt.Orientation.Horizontal)
        self._default_state = self.saveState(LAYOUT_VERSION)

    def when_ready(self, request: Callable[[], object]) -> None:
        """Run ``request`` now, or once the panes are built."""
        if self.ready:
            request()
        else:
            self._waiting.append(request)

    def _build_docks(self) -> None:
        self.setCorner(Qt.Corner.BottomLeftCorner, LEFT)
        self.setCorner(Qt.Corner.BottomRightCorner, RIGHT)
        self.docks: dict[str, QDockWidget] = {}
        for d in DOCKS:
            self._dock(d.name, d.title, loading("Loading…"), d.area)
            if d.tab_with is not None:
                self.tabifyDockWidget(self.docks[d.tab_with], self.docks[d.name])
        for name in ("goals", "skills"):
            self.docks[name].raise_()
        for names, sizes, orientation in SIZES:
            self.resizeDocks([self.docks[n] for n in names], list(sizes), orientation)

    def _dock(self, name: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> None:
        """Put ``widget`` into dock ``name`` (made here unless the frame has it already)."""
        dock = self.docks.get(name)
        if dock is None:
            dock = QDockWidget(title, self)
            dock.setObjectName(f"dock_{name}")
            self.addDockWidget(area, dock)
            self.docks[name] = dock
        dock.setWidget(widget)

    def _place(self, entry: Entry) -> None:
        """An action joins its menu (made when its first action comes)."""
        menu = self._menus.get(entry.category)
        if menu is None:
            menu = self._menus[entry.category] = self.menuBar().addMenu("&" + entry.category)
        menu.addAction(entry.action)
        if entry.id == SUBMENU_AFTER:
            menu.addMenu(self.recent_menu)
            self._fill_recent()

    def _build_toolbar(self) -> None:
        tools = QToolBar("Controls", self)
        tools.setObjectName("controls")
        for name in TOOLBAR:
            tools.addAction(self.registry[name])
        self.addToolBar(tools)

    def _build_status(self) -> None:
        self.run_label = QLabel("")
        self.run_label.setObjectName("runLabel")
        self.run_label.setMinimumWidth(380)
        self.run_label.setMaximumWidth(560)  # a long activity line must not widen the window
        self.statusBar().addPermanentWidget(self.run_label)
        self.busy_line = busy = BusyLine(
            self.runner, self.registry["view.cancel"], self.statusBar()
        )
        self.busy_label, self.busy_bar, self.busy_cancel = busy.label, busy.bar, busy.cancel
        self.runner.error.connect(self.report_error)
        self.session.changed.connect(self._title)

    def _connect(self) -> None:
        self.traces.trace_chosen.connect(self.open_trace)
        self.timeline.message_selected.connect(self.detail.show_message)
        self.timeline.band_selected.connect(self._band_selected)
        for chosen in (self.detail.jump, self.context.select_message, self.skills.select_message,
                       self.grants.select_message):  # fmt: skip
            chosen.connect(self.select_message)
        self.goals.goal_chosen.connect(self.timeline.filter_goal)
        self.context.current_ready.connect(self.budget.show_report)
        self.importer.imported.connect(self._imported)
        self.importer.finished.connect(self._import_finished)
        self.live.changed.connect(self._run_state)
        self.live.data_changed.connect(self._live_refresh)
        self.live.activity.connect(self._run_activity)
        self.live.failed.connect(lambda exc: self.report_error(exc, "Run"))
        # The timeline loads first (first paint); the other panes follow once it has.
        self.delegation.open_trace.connect(self.open_trace)
        for pane in (self.goals, self.context, self.records, self.delegation):
            self.timeline.main_path_loaded.connect(pane.reload)

    # -- store and trace ------------------------------------------------------------------
    def choose_store(self) -> None:
        kinds = "ctxlens stores (*.ctxlens *.db *.sqlite);;All files (*)"
        dialog = QFileDialog(self, "Open store", str(Path.home()), kinds)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.open_store)
        dialog.open()

    def open_store(self, path: str | Path, trace_id: str | None = None) -> bool:
        if not self.timeline_built:  # the first frame is up; the store opens with the timeline
            self.statusBar().showMessage(f"Opening {path}…")
            self._waiting_timeline.append(lambda: self.statusBar().clearMessage())
            self._waiting_timeline.append(lambda: self._open_first(path, trace_id))
            return True
        if not self._run_idle("open another store"):
            return False
        try:
            store = self.session.open_store(path)
        except CtxlensError as exc:
            self.report_error(exc, "Cannot open store")
            return False
        return self._show_store(store, trace_id)

    def _show_store(self, store: Store, trace_id: str | None = None) -> bool:
        try:
            traces = store.traces()
        except CtxlensError as exc:
            self.report_error(exc, "Cannot read store")
            return False
        self.settings.add_recent_store(_recent_name(store))
        self._fill_recent()
        chosen = trace_id or (traces[-1].id if traces else None)
        try:
            self.session.select_trace(chosen)
        except CtxlensError as exc:
            self.report_error(exc)
            self.session.select_trace(traces[-1].id if traces else None)
        return True

    def choose_store_url(self, url: str = "") -> None:
        """Ask for a server URL (and its password, which is never saved), then open it."""
        from ui.dialogs.store_url import StoreUrlDialog

        def make() -> StoreUrlDialog:
            dialog = StoreUrlDialog(url, self)
            dialog.chosen.connect(self.open_store_url)
            return dialog

        self.url_dialog = show_one(self.url_dialog, make)

    def open_store_when_built(self, label: str, build: Callable[[TaskControl], str]) -> None:
        """Open the store ``build`` creates off the UI thread (a first start records the
        demo run): the window is usable at once, the panes fill in when it is ready."""
        self.statusBar().showMessage(label[:1].upper() + label[1:] + "…")

        def done(path: str) -> None:
            self.statusBar().showMessage("The demo store is ready", 5000)
            self.open_store(path)

        def failed(exc: BaseException) -> None:
            self.statusBar().showMessage("Could not create the demo store", 8000)
            self.report_error(exc, "Cannot create the demo store")

        self.when_ready(lambda: self.runner.submit(label, build, done, on_error=failed, drain=True))

    def open_store_url(self, target: str) -> None:
        """Connect off the UI thread (a server may take seconds to answer or time out);
        the open store stays until the new one is ready. An error names the server."""
        shown = strip_password(target)
        self.statusBar().showMessage(f"Connecting to {shown}…")

        def done(store: Store) -> None:
            wanted = self._opening_url == job
            self._opening_url = None
            if not wanted or not self._run_idle("open another store"):
                store.close()
                return
            self.session.adopt(store)
            self._show_store(store)
            self.statusBar().showMessage(f"Opened {shown}", 5000)

        def failed(exc: BaseException) -> None:
            self._opening_url = None
            self.statusBar().showMessage(f"Could not open {shown}", 8000)
            self.report_error(exc, "Cannot open store")

        from core.store import Store

        job = self.runner.submit(
            "connect to store", lambda _c: Store.open(target), done, on_error=failed, drain=True
        )
        self._opening_url = job

    def open_trace(self, trace_id: str) -> None:
        """Show a trace picked in a pane: its record comes from the trace list (read off
        the UI thread), so opening it reads nothing here."""
        self.session.select_trace(trace_id, self.traces.record(trace_id))

    def reload(self) -> None:
        store = self.session.store
        if store is not None:
            self.open_store(store.describe(), self.session.trace_id)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent_stores():
            action = self.recent_menu.addAction(path)
            action.triggered.connect(self._opener(path))
        self.recent_menu.setEnabled(bool(self.settings.recent_stores()))

    def _opener(self, path: str) -> Callable[[bool], None]:
        def run(_checked: bool = False) -> None:
            if is_server_url(path):
                self.choose_store_url(path)  # the password was not saved: ask again
            else:
                self.open_store(path)

        return run

    # -- import ---------------------------------------------------------------------------
    def choose_import(self) -> None:
        self._import_dialog(QFileDialog.FileMode.ExistingFiles, "Import trace files")

    def choose_import_folder(self) -> None:
        self._import_dialog(QFileDialog.FileMode.Directory, "Import a folder of traces")

    def _import_dialog(self, mode: QFileDialog.FileMode, title: str) -> None:
        if self.session.store is None:
            self.statusBar().showMessage("Open a store first (Ctrl+O).", 5000)
            return
        dialog = QFileDialog(self, title, str(Path.home()))
        dialog.setFileMode(mode)
        if mode == QFileDialog.FileMode.ExistingFiles:
            dialog.setNameFilter("Traces (*.jsonl *.json *.eval *.traj *.ndjson);;All files (*)")
            dialog.filesSelected.connect(self.import_paths)
        else:
            dialog.fileSelected.connect(lambda path: self.import_paths([path]))
        self.file_dialog = dialog
        dialog.open()

    def import_paths(self, paths: list[str]) -> bool:
        """Import files and folders off the UI thread, with progress and cancel."""
        if self.importer.running:
            self.statusBar().showMessage("An import is already running.", 5000)
            return False
        return self.importer.start(paths)

    def _imported(self, report: ImportReport) -> None:
        """The traces are stored (their token counts may still be filling in): show them."""
        self.traces.reload()
        first = report.first_trace
        if first is not None and self.session.store is not None:
            self.session.select_trace(first)
        self.statusBar().showMessage(report.headline().capitalize(), 10_000)

    def _import_finished(self, report: ImportReport) -> None:
        self.traces.reload()
        self.statusBar().showMessage(report.headline().capitalize(), 10_000)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _local_paths(event) and self.session.store is not None and self.ready:
            event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if _local_paths(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = _local_paths(event)
        if paths and self.import_paths(paths):
            event.acceptProposedAction()

    def _title(self) -> None:
        trace = self.session.current()
        store = self.session.store
        parts = ["ctxlens"]
        if trace is not None:
            parts.append(trace.title or trace.id)
        if store is not None:
            parts.append(store.describe())
        self.setWindowTitle(" — ".join(parts))

    # -- selection ------------------------------------------------------------------------
    def select_message(self, sequence: int) -> None:
        """A message picked in a pane (a link, a context row): selected in the timeline,
        looked up off the UI thread when its rows are not in memory."""

        def missing() -> None:
            self.statusBar().showMessage(
                f"#{sequence} is not on the shown path (try Show branches)", 5000
            )
            self.detail.show_message(sequence)

        self.timeline.find_and_select(sequence, missing)

    def _band_selected(self, band: Band) -> None:
        self.statusBar().showMessage(f"Compaction boundary: {band.text}", 8000)

    def confirm_rewind(self) -> None:
        """Ask first (non-modal), then rewind through ``Store.rewind``."""
        seq = self.timeline.selected_sequence()
        trace = self.session.trace()
        if seq is None or trace is None:
            self.statusBar().showMessage("Select a message to rewind to.", 4000)
            return
        if not self._run_idle("rewind"):
            return
        box = QMessageBox(self)
        box.setObjectName("confirmRewind")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Rewind")
        box.setText(f"Rewind the trace to message #{seq}?")
        box.setInformativeText(
            f"The head moves from #{trace.head} to #{seq}. Later messages stay stored and remain "
            "reachable as an abandoned branch."
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        box.accepted.connect(lambda: self.rewind_to(seq))
        self.confirm_box = box
        box.open()

    def rewind_to(self, sequence: int) -> None:
        if not self._run_idle("rewind"):
            return
        try:
            old, new = self.session.rewind(sequence)
        except CtxlensError as exc:
            self.report_error(exc)
            return
        self.timeline.select_sequence(new)
        self.statusBar().showMessage(f"Rewound: head #{old} → #{new}", 8000)

    def show_compact(self) -> None:
        """The compact dialog, on the level of the selected band if a band is selected."""
        if self.session.trace() is None:
            self.statusBar().showMessage("Open a trace first.", 4000)
            return
        if not self._run_idle("compact"):
            return
        band = self.timeline.selected_record()
        from core.context.compaction.config import ALL_LEVELS  # dialogs load on first use
        from core.inspector.bands import Band
        from ui.dialogs.compact import CompactDialog

        level = band.level if isinstance(band, Band) and band.level in ALL_LEVELS else None

        def make() -> CompactDialog:
            dialog = CompactDialog(self.session, self.runner, level, self)
            dialog.applied.connect(self._compacted)
            return dialog

        self.compact_dialog = show_one(self.compact_dialog, make)
        self.compact_dialog.preview()

    def _compacted(self, cp: CompactPreview) -> None:
        event = cp.preview.event
        self.session.refresh()
        saved = cp.preview.outcome.tokens_saved
        where = f" at #{event.at_sequence}" if event is not None else ""
        self.statusBar().showMessage(
            f"Recorded a {cp.preview.outcome.applied_level} compaction{where}: "
            f"{saved:,} tokens saved",
            10_000,
        )

    # -- run controls ---------------------------------------------------------------------
    def _run_idle(self, doing: str) -> bool:
        """Refuse ``doing`` while a step is in flight (the runner writes to the trace; no
        run before the run controls exist)."""
        if not self.ready or self.live.idle:
            return True
        self.statusBar().showMessage(f"Cannot {doing} while the run is busy: pause it first.", 6000)
        return False

    def _run_state(self) -> None:
        """Show the run's status (``core/run/status.py:run_status``) on the controls."""
        status, reg = self.live.status(), self.registry
        for name, can, tip in (("run.run", status.can_step, RUN_TIP),
                               ("run.step", status.can_step, STEP_TIP)):  # fmt: skip
            reg[name].setEnabled(can)
            reg[name].setToolTip(status.tip(tip))
        reg["run.pause"].setEnabled(status.can_pause)
        reg["run.stop"].setEnabled(status.can_stop)
        for name in ("run.rewind", "run.compact"):
            reg[name].setEnabled(status.idle)
        reg["run.rewind"].setToolTip(REWIND_TIP if status.idle else BUSY_TIP)
        self.run_label.setText(status.line)
        self.run_label.setToolTip(status.why)
        if self.live.reading_state:  # a trace just opened: its phase is on its way
            for name in ("run.run", "run.step"):
                reg[name].setEnabled(False)
                reg[name].setToolTip(READING_TIP)
            self.run_label.setText("Run: reading the trace's state…")
            self.run_label.setToolTip(READING_TIP)

    def _run_activity(self, text: str) -> None:
        if self.live.busy in ("step", "run"):
            self.run_label.setText(self.live.status().line)
        else:
            self.statusBar().showMessage(text, 5000)

    def _live_refresh(self) -> None:
        """The runner wrote: reload the panes, keeping the selection (or following the
        head when it was selected)."""
        self.timeline.keep_selection()
        self.session.refresh()
        if self.live.idle:
            self.traces.reload()

    def show_new_demo(self) -> None:
        if self.session.store is None:
            self.statusBar().showMessage("Open a store first (Ctrl+O).", 5000)
            return
        from ui.dialogs.new_demo import NewDemoDialog  # loaded on first use

        def make() -> NewDemoDialog:
            dialog = NewDemoDialog(self)
            dialog.chosen.connect(self.new_demo_run)
            return dialog

        self.demo_dialog = show_one(self.demo_dialog, make)

    def show_run_task(self) -> None:
        from ui.run_task import show_run_task

        show_run_task(self)

    def new_demo_run(self, opts: DemoOptions | DelegationDemoOptions) -> str | None:
        """Create a demo trace of the chosen scenario, show it, and open its turn (ready to
        Step or Run)."""
        from core.demo.options import DelegationDemoOptions

        if isinstance(opts, DelegationDemoOptions):
            from core.demo.delegation import create_delegation_trace  # loaded on first use

            limits = opts.limits()
            return self.start_new_run(
                "start a new demo run", lambda s: create_delegation_trace(s, limits)
            )
        from core.demo.scenario import create_demo_trace  # loaded on first use

        return self.start_new_run("start a new demo run", lambda s: create_demo_trace(s, opts))

    def start_new_run(self, doing: str, create: Callable[[Store], str]) -> str | None:
        """A new trace from ``create`` (New demo run, Run a task…), shown with its turn
        open; ``None`` (and the reason shown) when it cannot start."""
        store = self.session.store
        if store is None or not self._run_idle(doing):
            return None
        try:
            trace_id = create(store)
        except CtxlensError as exc:
            self.report_error(exc)
            return None
        self.traces.reload()
        self.session.select_trace(trace_id)
        self.live.start_turn()
        return trace_id

    def report_error(self, exc: object, title: str = "ctxlens") -> None:
        from ui.errors import show_error

        if isinstance(exc, BaseException):
            self.last_error = show_error(self, exc, title)

    # -- view -----------------------------------------------------------------------------
    def show_palette(self) -> None:
        from ui.palette import CommandPalette

        if self.palette_dialog is None:
            self.palette_dialog = CommandPalette(self.registry, self)
        self.palette_dialog.popup()

    def focus_search(self) -> None:
        self.timeline.search_box.setFocus()
        self.timeline.search_box.selectAll()

    def only_toggled(self) -> None:
        self.timeline.only_matches.setChecked(self.registry["nav.only"].isChecked())

    def branches_toggled(self) -> None:
        self.timeline.set_branches_visible(self.registry["nav.branches"].isChecked())

    def theme_toggled(self) -> None:
        theme = "dark" if self.registry["view.dark"].isChecked() else "light"
        self.settings.theme = theme
        apply_theme(theme)
        if self.ready:
            self.detail.set_dark(theme == "dark")

    def reset_layout(self) -> None:
        self.restoreState(self._default_state, LAYOUT_VERSION)
        for dock in self.docks.values():
            dock.show()

    def cancel_work(self) -> None:
        """Drop every running query (search, context report, …); results are discarded."""
        labels = self.runner.labels()
        self.runner.cancel()
        self.timeline.cancel_search()
        if labels:
            self.statusBar().showMessage("Cancelled: " + ", ".join(labels), 5000)

    def is_settled(self) -> bool:
        """The trace (if there is one) is shown and no background work is pending
        (screenshots, tests)."""
        if not self.ready:
            return False
        shown = self.timeline.source is not None or self.session.trace_id is None
        idle = not self.runner.busy and self.live.settled and not self.timeline.loading
        return shown and self.session.store is not None and idle

    # -- persistence ----------------------------------------------------------------------
    def _restore(self) -> None:
        geometry, state = self.settings.window_state()
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1600, 1000)
        if isinstance(state, QByteArray):
            self.restoreState(state, LAYOUT_VERSION)
        dark = self.settings.theme == "dark"
        self.registry["view.dark"].setChecked(dark)
        apply_theme(self.settings.theme)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.ready and self.live.needs_close() and _loop_running():
            event.ignore()  # the live run closes on the loop first, then the window
            self.live.close_then(self.close)
            return
        self.settings.save_window_state(self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.settings.sync()
        # gone at once: the wait for a report still computing (a compare, a compaction
        # preview, a playback frame of a long trace: up to 10 s) is not a frozen window
        self.hide()
        self.runner.shutdown()
        if self.timeline_built:  # closed before the first frame: no timeline yet
            self.timeline.shutdown()
        self.session.close()
        self._closed = True
        super().closeEvent(event)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _recent_name(store: Store) -> str:
    """How a store is remembered: its file, or its URL without the password."""
    return str(store.path) if store.path is not None else strip_password(store.url)


def _local_paths(event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> list[str]:
    data = event.mimeData()
    if not data.hasUrls():
        return []
    return [u.toLocalFile() for u in data.urls() if u.isLocalFile()]
