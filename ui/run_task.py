"""Run → Run a task…: the dialog, then a new trace in the open store run by the window's
run controller against the endpoint given (``core/run/task_run.py``), ready to Run or Step
like a new demo run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.errors import CtxlensError

if TYPE_CHECKING:
    from core.run.task_run import TaskRun
    from ui.main_window import MainWindow

RUN_TASK_TIP = "Run a task with the real runtime against an endpoint you name (base URL, model)"


def show_run_task(win: MainWindow) -> None:
    if win.session.store is None:
        win.statusBar().showMessage("Open a store first (Ctrl+O).", 5000)
        return
    from ui.dialogs.run_task import RunTaskDialog  # loaded on first use

    dialog = RunTaskDialog(win)
    dialog.chosen.connect(lambda run: start_task_run(win, run))
    dialog.finished.connect(dialog.deleteLater)
    win.task_dialog = dialog
    dialog.open()


def start_task_run(win: MainWindow, run: TaskRun) -> str | None:
    """Create the task's trace, show it, and open its turn on the endpoint."""
    store = win.session.store
    if store is None or not win.live.idle:
        win.statusBar().showMessage("Cannot start a task while the run is busy.", 6000)
        return None
    from core.run.task_run import create_task_trace, endpoint_env, find_key

    try:
        key = find_key(run.key_source, run.base_url)
        trace_id = create_task_trace(store, run)
    except CtxlensError as exc:
        win.report_error(exc)
        return None
    win.traces.reload()
    win.session.select_trace(trace_id)
    win.live.use_endpoint(trace_id, endpoint_env(run, key), run.task)
    win.live.start_turn()
    return trace_id
