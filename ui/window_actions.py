"""The main window's actions, menus and toolbar as tables (UI-1).

One row per action (``ui/actions.py:Spec``: id, text, handler, shortcut, tip, menu); a
handler names what it calls on the window (``call("timeline.step_match", 1)``), looked up
when the action fires, so the table is made before the panes exist (they are built after
the first paint). Adding an action is one row here and the method it calls. Panes that
install themselves (playback, search, live sources) register their own rows the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from core.inspector.export import FORMATS
from ui.actions import Spec


def call(path: str, *args: Any) -> Callable[[Any], object]:
    """A handler calling the window's ``path`` (a method, or ``pane.method``) with ``args``."""
    get = attrgetter(path)
    return lambda window: get(window)(*args)


PAUSE_TIP = "Stop Run at the next step boundary (the current step finishes)"
STOP_TIP = "Abandon an in-flight model call now (Pause waits for the step to finish)"
NEW_DEMO_TIP = "Create a demo trace in the open store, ready to Step or Run"
COMPACT_TIP = "Preview a compaction level or layer on the current context, then apply it"
REWIND_TIP = "Move the head back to the selected message (nothing is deleted)"
RUN_TIP = "Run until the turn is done or paused"
STEP_TIP = "One model call or one tool"
RUN_TASK_TIP = "Run a task with the real runtime against an endpoint you name (base URL, model)"
IMPORT_TIP = (
    "Import trace files (Claude Code, Codex, OpenTelemetry, Inspect, OpenHands, SWE-agent, "
    "OpenAI chat); you can also drop files or folders onto the window"
)
FOLDER_TIP = "Import every trace in a folder (a Claude Code project, an OpenHands conversation)"
URL_TIP = "Open a team store on a database server (postgresql+psycopg://…)"


def _export(fmt: str) -> Callable[[Any], object]:
    """Ask where to write the shown trace as ``fmt`` (``ui/export.py:TraceExporter.choose``)."""
    return lambda window: window.exporter.choose(fmt)


def _export_rows() -> list[Spec]:
    """File → Export trace as …, one row per format (``core/inspector/export.py:FORMATS``)."""
    return [
        Spec(f"file.export_{fmt}", f"Export trace as {label.split(' (')[0]}…",
             _export(fmt), key, f"Write the shown trace as {label}", "File")
        for fmt, (label, _suffix, key) in FORMATS.items()
    ]  # fmt: skip


# fmt: off
ACTIONS: tuple[Spec, ...] = (
    Spec("file.open", "&Open store…", call("choose_store"), "Ctrl+O", menu="File"),
    Spec("file.open_url", "Open store &URL…", call("choose_store_url"), "Ctrl+Shift+O", URL_TIP,
         "File"),
    Spec("file.import", "&Import traces…", call("choose_import"), "Ctrl+I", IMPORT_TIP, "File"),
    Spec("file.import_folder", "Import &folder…", call("choose_import_folder"), "Ctrl+Shift+I",
         FOLDER_TIP, "File"),
    Spec("file.reload", "&Reload", call("reload"), "Ctrl+R", "Reload the store", "File"),
    *_export_rows(),
    Spec("file.quit", "&Quit", call("close"), "Ctrl+Q", menu="File"),
    Spec("view.cancel", "&Cancel background work", call("cancel_work"), "Ctrl+.", menu="View"),
    Spec("view.palette", "Command &palette…", call("show_palette"), "Ctrl+Shift+P", menu="View"),
    Spec("view.dark", "&Dark theme", call("theme_toggled"), "Ctrl+Shift+L", menu="View",
         checkable=True),
    Spec("view.reset", "Reset &layout", lambda w: w.reset_layout(), "Ctrl+Shift+0", menu="View"),
    Spec("nav.search", "&Search timeline", call("focus_search"), "Ctrl+F", menu="Navigate"),
    Spec("nav.next", "&Next match", call("timeline.step_match", 1), "F3", menu="Navigate"),
    Spec("nav.prev", "&Previous match", call("timeline.step_match", -1), "Shift+F3",
         menu="Navigate"),
    Spec("nav.only", "Only &matches", call("only_toggled"), "Ctrl+Shift+F",
         "Show only matching rows", "Navigate", checkable=True),
    Spec("nav.branches", "Show &branches", call("branches_toggled"), "Ctrl+B",
         "Show side and abandoned branches", "Navigate", checkable=True),
    Spec("nav.main", "Back to &main path", call("timeline.view_head", None), "Ctrl+Home",
         menu="Navigate"),
    Spec("ctx.next", "Context: next call", call("context.step_call", 1), "Ctrl+]",
         menu="Context"),
    Spec("ctx.prev", "Context: previous call", call("context.step_call", -1), "Ctrl+[",
         menu="Context"),
    Spec("ctx.current", "Context: next call (current)", call("context.select_call", None),
         "Ctrl+\\", menu="Context"),
    Spec("run.rewind", "Re&wind to selected message…", call("confirm_rewind"), "Ctrl+Shift+R",
         REWIND_TIP, "Run"),
    Spec("run.run", "&Run", call("live.run"), "F5", RUN_TIP, "Run", enabled=False),
    Spec("run.pause", "&Pause", call("live.pause"), "F6", PAUSE_TIP, "Run", enabled=False),
    Spec("run.step", "&Step", call("live.step"), "F10", STEP_TIP, "Run", enabled=False),
    Spec("run.stop", "S&top", call("live.stop"), "Shift+F5", STOP_TIP, "Run", enabled=False),
    Spec("run.new_demo", "&New demo run…", call("show_new_demo"), "Ctrl+Shift+N", NEW_DEMO_TIP,
         "Run"),
    Spec("run.task", "Run a &task…", call("show_run_task"), "Ctrl+Shift+T", RUN_TASK_TIP,
         "Run"),
    Spec("run.compact", "&Compact…", call("show_compact"), "Ctrl+Shift+K", COMPACT_TIP, "Run"),
)
# fmt: on

TOOLBAR = ("file.open", "file.import", "run.run", "run.pause", "run.step", "run.stop",
           "run.rewind", "run.compact", "view.palette")  # fmt: skip
"""The Controls toolbar, left to right."""

MENUS = ("File", "View", "Panes", "Navigate", "Context", "Run", "Help")
"""The menu bar, left to right (a menu of another name goes after these)."""

SUBMENU_AFTER = "file.open_url"
"""File → Open recent follows this action."""
