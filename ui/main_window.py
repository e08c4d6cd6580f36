"""The main window (UI-1): the timeline in the middle, dockable panes around it.

Wiring only: every pane reads ``core`` through the shared ``Session``; this class connects
their signals, owns the actions (menus, toolbar, shortcuts, command palette) and remembers
layout, geometry, theme and recent stores.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import (
    QDialog,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QToolBar,
    QToolButton,
    QWidget,
)

from core.errors import CtxlensError
from core.inspect.bands import Band
from core.inspect.context_report import ContextReport
from core.inspect.imports import ImportReport
from core.inspect.store_url import is_server_url, strip_password
from core.run.state import Phase
from core.store import Store
from ui import live as live_ui
from ui.actions import ActionRegistry
from ui.dialogs.imports import Importer
from ui.dialogs.store_url import StoreUrlDialog
from ui.errors import show_error
from ui.export import TraceExporter
from ui.help import HelpMenu
from ui.palette import CommandPalette
from ui.panes.budget import BudgetPane
from ui.panes.context import ContextPane
from ui.panes.delegation import DelegationPane
from ui.panes.detail import MessageDetailPane
from ui.panes.goals import GoalPane
from ui.panes.records import GrantsPane, RecordsLoader, SkillsPane
from ui.panes.traces import TraceBrowser
from ui.replay.install import install as install_replay
from ui.run_controller import RunController
from ui.run_task import RUN_TASK_TIP, show_run_task
from ui.search import install as search_ui
from ui.session import Session
from ui.settings import AppSettings
from ui.tasks import TaskControl, TaskRunner
from ui.theme import apply_theme
from ui.timeline.widget import TimelineWidget

if TYPE_CHECKING:
    from core.demo.scenario import DemoOptions
    from core.inspect.compaction import CompactPreview
    from ui.dialogs.compact import CompactDialog
    from ui.dialogs.new_demo import NewDemoDialog

log = logging.getLogger("ctxlens.ui")
LAYOUT_VERSION = 1
PAUSE_TIP = "Stop Run at the next step boundary (the current step finishes)"
STOP_TIP = "Abandon an in-flight model call now (Pause waits for the step to finish)"
NEW_DEMO_TIP = "Create a demo trace in the open store, ready to Step or Run"
BUSY_TIP = "Pause the run first (F6)"
COMPACT_TIP = "Preview a compaction level or layer on the current context, then apply it"
IMPORT_TIP = (
    "Import trace files (Claude Code, Codex, OpenTelemetry, Inspect, OpenHands, SWE-agent, "
    "OpenAI chat); you can also drop files or folders onto the window"
)


class MainWindow(QMainWindow):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("ctxlens")
        self.settings = settings
        self.session = Session(self)
        self.runner = TaskRunner(self)
        self.live = RunController(self.session, self)
        self.registry = ActionRegistry(self)
        self.palette_dialog: CommandPalette | None = None
        self.confirm_box: QMessageBox | None = None
        self.last_error: QMessageBox | None = None
        self.compact_dialog: CompactDialog | None = None
        self.url_dialog: StoreUrlDialog | None = None
        self.file_dialog: QFileDialog | None = None
        self.demo_dialog: NewDemoDialog | None = None
        self.task_dialog: QDialog | None = None
        self.importer = Importer(self.session, self.runner, self)
        self._opening_url: int | None = None
        self._activity = ""
        self.setAcceptDrops(True)
        self._build_panes()
        self._build_actions()
        self._build_menus()
        self._build_status()
        self._connect()
        self._run_state()
        self._default_state = self.saveState(LAYOUT_VERSION)
        self._restore()

    # -- construction ---------------------------------------------------------------------
    def _build_panes(self) -> None:
        s, r = self.session, self.runner
        self.timeline = TimelineWidget(s, r)
        self.setCentralWidget(self.timeline)
        self.traces = TraceBrowser(s, self.settings, r)
        self.goals = GoalPane(s, r)
        self.detail = MessageDetailPane(s, self.runner)
        self.context = ContextPane(s, r)
        self.skills = SkillsPane()
        self.grants = GrantsPane()
        self.budget = BudgetPane()
        self.delegation = DelegationPane(s, r)
        self.records = RecordsLoader(s, r, self.skills, self.grants)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        left, right, bottom = (
            Qt.DockWidgetArea.LeftDockWidgetArea,
            Qt.DockWidgetArea.RightDockWidgetArea,
            Qt.DockWidgetArea.BottomDockWidgetArea,
        )
        self.docks: dict[str, QDockWidget] = {}
        self._dock("traces", "Traces", self.traces, left)
        self._dock("goals", "Goals", self.goals, left)
        self._dock("detail", "Message", self.detail, right)
        self._dock("context", "Context", self.context, right)
        self._dock("skills", "Skills", self.skills, bottom)
        self._dock("grants", "Grants", self.grants, bottom)
        self._dock("budget", "Budget", self.budget, bottom)
        self._dock("delegation", "Delegation", self.delegation, bottom)
        self.tabifyDockWidget(self.docks["skills"], self.docks["grants"])
        self.tabifyDockWidget(self.docks["grants"], self.docks["budget"])
        self.tabifyDockWidget(self.docks["budget"], self.docks["delegation"])
        self.docks["skills"].raise_()
        self.resizeDocks(
            [self.docks["traces"], self.docks["detail"]], [440, 500], Qt.Orientation.Horizontal
        )
        self.resizeDocks(
            [self.docks["traces"], self.docks["goals"]], [420, 240], Qt.Orientation.Vertical
        )
        self.resizeDocks(
            [self.docks["detail"], self.docks["context"]], [380, 560], Qt.Orientation.Vertical
        )
        self.resizeDocks([self.docks["skills"]], [190], Qt.Orientation.Vertical)

    def _dock(self, name: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.docks[name] = dock

    def _build_actions(self) -> None:
        a = self.registry.add
        a(
            "file.open",
            "&Open store…",
            self.choose_store,
            "Ctrl+O",
            category="File",
        )
        a(
            "file.open_url",
            "Open store &URL…",
            self.choose_store_url,
            "Ctrl+Shift+O",
            "Open a team store on a database server (postgresql+psycopg://…)",
            "File",
        )
        a("file.import", "&Import traces…", self.choose_import, "Ctrl+I", IMPORT_TIP, "File")
        a("file.import_folder", "Import &folder…", self.choose_import_folder, "Ctrl+Shift+I",
          "Import every trace in a folder (a Claude Code project, an OpenHands conversation)",
          "File")  # fmt: skip
        a("file.reload", "&Reload", self.reload, "Ctrl+R", "Reload the store", "File")
        self.exporter = TraceExporter(self, self.session, self.runner)
        self.exporter.register(self.registry)
        a("file.quit", "&Quit", self.close, "Ctrl+Q", category="File")
        a("view.cancel", "&Cancel background work", self.cancel_work, "Ctrl+.", category="View")
        a("view.palette", "Command &palette…", self.show_palette, "Ctrl+Shift+P", category="View")
        a(
            "view.dark",
            "&Dark theme",
            self._theme_toggled,
            "Ctrl+Shift+L",
            category="View",
            checkable=True,
        )
        a("view.reset", "Reset &layout", self.reset_layout, "Ctrl+Shift+0", category="View")
        for i, (name, dock) in enumerate(self.docks.items(), start=1):
            self.registry.adopt(f"pane.{name}", dock.toggleViewAction(), "Panes", f"Alt+{i}")
        a(
            "nav.search",
            "&Search timeline",
            self.focus_search,
            "Ctrl+F",
            category="Navigate",
        )
        a("nav.next", "&Next match", lambda: self.timeline.step_match(1), "F3", category="Navigate")
        a(
            "nav.prev",
            "&Previous match",
            lambda: self.timeline.step_match(-1),
            "Shift+F3",
            category="Navigate",
        )
        only_tip = "Show only matching rows"
        a(
            "nav.only",
            "Only &matches",
            self._only_toggled,
            "Ctrl+Shift+F",
            only_tip,
            "Navigate",
            True,
        )
        branch_tip = "Show side and abandoned branches"
        a(
            "nav.branches",
            "Show &branches",
            self._branches_toggled,
            "Ctrl+B",
            branch_tip,
            "Navigate",
            True,
        )
        a(
            "nav.main",
            "Back to &main path",
            lambda: self.timeline.view_head(None),
            "Ctrl+Home",
            category="Navigate",
        )
        a(
            "ctx.next",
            "Context: next call",
            lambda: self.context.step_call(1),
            "Ctrl+]",
            category="Context",
        )
        a(
            "ctx.prev",
            "Context: previous call",
            lambda: self.context.step_call(-1),
            "Ctrl+[",
            category="Context",
        )
        current = self.context.select_call
        a(
            "ctx.current",
            "Context: next call (current)",
            lambda: current(None),
            "Ctrl+\\",
            category="Context",
        )
        a("run.rewind", "Re&wind to selected message…", self.confirm_rewind, "Ctrl+Shift+R",
          "Move the head back to the selected message (nothing is deleted)", "Run")  # fmt: skip
        a("run.run", "&Run", self.live.run, "F5", "Run until the turn is done or paused", "Run",
          enabled=False)  # fmt: skip
        a("run.pause", "&Pause", self.live.pause, "F6", PAUSE_TIP, "Run", enabled=False)
        a("run.step", "&Step", self.live.step, "F10", "One model call or one tool", "Run",
          enabled=False)  # fmt: skip
        a("run.stop", "S&top", self.live.stop, "Shift+F5", STOP_TIP, "Run", enabled=False)
        a("run.new_demo", "&New demo run…", self.show_new_demo, "Ctrl+Shift+N", NEW_DEMO_TIP,
          "Run")  # fmt: skip
        a("run.task", "Run a &task…", lambda: show_run_task(self), "Ctrl+Shift+T", RUN_TASK_TIP,
          "Run")  # fmt: skip
        a("run.compact", "&Compact…", self.show_compact, "Ctrl+Shift+K", COMPACT_TIP, "Run")
        self.replay = install_replay(self)  # playback scrubber, Re-run with…, Compare (#9)
        self.search_all = search_ui.install(self)  # Search all traces… (#21)
        self.sources = live_ui.install(self)  # Sources pane, live traces followed (#16)
        self.help = HelpMenu(self, self.registry)  # last: the Help menu comes last

    def _build_menus(self) -> None:
        bar = self.menuBar()
        menus: dict[str, QMenu] = {}
        self.recent_menu = QMenu("Open &recent", self)
        for entry in self.registry.all():
            menu = menus.get(entry.category)
            if menu is None:
                menu = menus[entry.category] = bar.addMenu("&" + entry.category)
            menu.addAction(entry.action)
            if entry.id == "file.open_url":
                menu.addMenu(self.recent_menu)
        tools = QToolBar("Controls", self)
        tools.setObjectName("controls")
        for name in (
            "file.open",
            "file.import",
            "run.run",
            "run.pause",
            "run.step",
            "run.stop",
            "run.rewind",
            "run.compact",
            "view.palette",
        ):
            tools.addAction(self.registry[name])
        self.addToolBar(tools)
        self._fill_recent()

    def _build_status(self) -> None:
        self.busy_label = QLabel("")
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(120)
        self.busy_bar.setVisible(False)
        self.busy_cancel = QToolButton()
        self.busy_cancel.setDefaultAction(self.registry["view.cancel"])
        self.busy_cancel.setVisible(False)
        self.run_label = QLabel("")
        self.run_label.setObjectName("runLabel")
        self.run_label.setMinimumWidth(380)
        self.run_label.setMaximumWidth(560)  # a long activity line must not widen the window
        self.statusBar().addPermanentWidget(self.run_label)
        self.statusBar().addPermanentWidget(self.busy_label)
        self.statusBar().addPermanentWidget(self.busy_bar)
        self.statusBar().addPermanentWidget(self.busy_cancel)

    def _connect(self) -> None:
        self.traces.trace_chosen.connect(self.open_trace)
        self.timeline.message_selected.connect(self._message_selected)
        self.timeline.band_selected.connect(self._band_selected)
        self.detail.jump.connect(self.select_message)
        self.context.select_message.connect(self.select_message)
        self.skills.select_message.connect(self.select_message)
        self.grants.select_message.connect(self.select_message)
        self.goals.goal_chosen.connect(self.timeline.filter_goal)
        self.context.current_ready.connect(self._current_context)
        self.runner.error.connect(self.report_error)
        self.runner.busy_changed.connect(self._busy)
        self.runner.progress.connect(self._progress)
        self.session.changed.connect(self._title)
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
        if self.url_dialog is not None:
            self.url_dialog.deleteLater()
        self.url_dialog = StoreUrlDialog(url, self)
        self.url_dialog.chosen.connect(self.open_store_url)
        self.url_dialog.open()

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

        self.runner.submit(label, build, done, on_error=failed, drain=True)

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

        job = self.runner.submit(
            "connect to store", lambda _c: Store.open(target), done, on_error=failed, drain=True
        )
        self._opening_url = job

    def open_trace(self, trace_id: str) -> None:
        self.session.select_trace(trace_id)

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
        if _local_paths(event) and self.session.store is not None:
            event.acceptProposedAction()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if _local_paths(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = _local_paths(event)
        if paths and self.import_paths(paths):
            event.acceptProposedAction()

    def _title(self) -> None:
        trace = self.session.trace()
        store = self.session.store
        parts = ["ctxlens"]
        if trace is not None:
            parts.append(trace.title or trace.id)
        if store is not None:
            parts.append(store.describe())
        self.setWindowTitle(" — ".join(parts))

    # -- selection ------------------------------------------------------------------------
    def select_message(self, sequence: int) -> None:
        if not self.timeline.select_sequence(sequence):
            self.statusBar().showMessage(
                f"#{sequence} is not on the shown path (try Show branches)", 5000
            )
            self.detail.show_message(sequence)

    def _message_selected(self, sequence: int) -> None:
        self.detail.show_message(sequence)

    def _band_selected(self, band: Band) -> None:
        self.statusBar().showMessage(f"Compaction boundary: {band.text}", 8000)

    def _current_context(self, report: ContextReport) -> None:
        self.budget.show_report(report)

    # -- controls -------------------------------------------------------------------------
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
        from ui.dialogs.compact import CompactDialog

        level = band.level if isinstance(band, Band) and band.level in ALL_LEVELS else None
        if self.compact_dialog is not None:
            self.compact_dialog.deleteLater()
        dialog = CompactDialog(self.session, self.runner, level, self)
        dialog.applied.connect(self._compacted)
        self.compact_dialog = dialog
        dialog.open()
        dialog.preview()

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
        """Refuse ``doing`` while a step is in flight (the runner writes to the trace)."""
        if self.live.idle:
            return True
        self.statusBar().showMessage(f"Cannot {doing} while the run is busy: pause it first.", 6000)
        return False

    def _run_state(self) -> None:
        live, reg = self.live, self.registry
        can = live.can_step()
        why = live.why_not()
        reg["run.run"].setEnabled(can)
        reg["run.step"].setEnabled(can)
        reg["run.run"].setToolTip(f"Run until the turn is done or paused — {why}" if can else why)
        reg["run.step"].setToolTip(f"One model call or one tool — {why}" if can else why)
        reg["run.pause"].setEnabled(live.can_pause())
        reg["run.stop"].setEnabled(live.can_stop())
        for name in ("run.rewind", "run.compact"):
            reg[name].setEnabled(live.idle)
        reg["run.rewind"].setToolTip(
            "Move the head back to the selected message (nothing is deleted)"
            if live.idle
            else BUSY_TIP
        )
        self.run_label.setText(self._run_text())
        self.run_label.setToolTip(why)

    def _run_text(self) -> str:
        live = self.live
        if live.support is None:
            return ""
        if live.support.kind == "unconfigured":
            return "Run: no model endpoint configured (CTXLENS_BASE_URL)"
        if not live.support.runnable:
            trace = self.session.trace()
            source = trace.source if trace is not None else "these"
            return f"Run: {source} traces cannot run · New demo run: Ctrl+Shift+N"
        if live.busy == "opening":
            return "Run: starting the model…"
        if live.busy is not None:
            return ("Running" if live.running else "Step") + ": " + self._activity
        if live.phase is Phase.DONE:
            stop = f" ({live.last_stop})" if live.last_stop not in ("", "done") else ""
            return "Run: the turn is finished" + stop
        paused = "Paused · " if live.last_stop == "paused" else ""
        return f"{paused}Step: {live.next_text}"

    def _run_activity(self, text: str) -> None:
        self._activity = text
        if self.live.busy in ("step", "run"):
            self.run_label.setText(self._run_text())
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
        if self.demo_dialog is not None:
            self.demo_dialog.deleteLater()
        from ui.dialogs.new_demo import NewDemoDialog  # loaded on first use

        self.demo_dialog = NewDemoDialog(self)
        self.demo_dialog.chosen.connect(self.new_demo_run)
        self.demo_dialog.open()

    def new_demo_run(self, opts: DemoOptions) -> str | None:
        """Create a demo trace, show it, and open its turn (ready to Step or Run)."""
        store = self.session.store
        if store is None or not self._run_idle("start a new demo run"):
            return None
        try:
            from core.demo.scenario import create_demo_trace  # loaded on first use

            trace_id = create_demo_trace(store, opts)
        except CtxlensError as exc:
            self.report_error(exc)
            return None
        self.traces.reload()
        self.session.select_trace(trace_id)
        self.live.start_turn()
        return trace_id

    def report_error(self, exc: object, title: str = "ctxlens") -> None:
        if isinstance(exc, BaseException):
            self.last_error = show_error(self, exc, title)

    # -- view -----------------------------------------------------------------------------
    def show_palette(self) -> None:
        if self.palette_dialog is None:
            self.palette_dialog = CommandPalette(self.registry, self)
        self.palette_dialog.popup()

    def focus_search(self) -> None:
        self.timeline.search_box.setFocus()
        self.timeline.search_box.selectAll()

    def _only_toggled(self) -> None:
        self.timeline.only_matches.setChecked(self.registry["nav.only"].isChecked())

    def _branches_toggled(self) -> None:
        self.timeline.set_branches_visible(self.registry["nav.branches"].isChecked())

    def _theme_toggled(self) -> None:
        theme = "dark" if self.registry["view.dark"].isChecked() else "light"
        self.settings.theme = theme
        apply_theme(theme)
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

    def _busy(self, busy: bool) -> None:
        self.busy_bar.setVisible(busy)
        self.busy_cancel.setVisible(busy)
        self.busy_label.setText("Working: " + ", ".join(self.runner.labels()) if busy else "")

    def _progress(self, label: str, value: object) -> None:
        if isinstance(value, tuple) and len(value) == 2 and value[1]:
            self.busy_label.setText(f"Working: {label} ({100 * value[0] // value[1]} %)")
        elif isinstance(value, int):
            self.busy_label.setText(f"Working: {label} ({value:,} items)")
        elif isinstance(value, str):
            self.busy_label.setText(f"Working: {label} ({value})")

    def is_settled(self) -> bool:
        """The trace (if there is one) is shown and no background work is pending
        (screenshots, tests)."""
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
        if self.live.needs_close() and _loop_running():
            event.ignore()  # the live run closes on the loop first, then the window
            self.live.close_then(self.close)
            return
        self.settings.save_window_state(self.saveGeometry(), self.saveState(LAYOUT_VERSION))
        self.settings.sync()
        self.runner.shutdown()
        self.timeline.shutdown()
        self.session.close()
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
