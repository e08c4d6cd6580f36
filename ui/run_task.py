"""Run → Run a task…: the dialog, then a new trace in the open store run by the window's
run controller against the endpoint given (``core/run/task_run.py``), ready to Run or Step
like a new demo run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui.one_dialog import show_one

if TYPE_CHECKING:
    from core.run.task_run import TaskRun
    from core.store import Store
    from ui.main_window import MainWindow


def show_run_task(win: MainWindow) -> None:
    if win.session.store is None:
        win.statusBar().showMessage("Open a store first (Ctrl+O).", 5000)
        return
    from ui.dialogs.run_task import RunTaskDialog  # loaded on first use

    def make() -> RunTaskDialog:
        dialog = RunTaskDialog(win)
        dialog.chosen.connect(lambda run: start_task_run(win, run))
        return dialog

    win.task_dialog = show_one(win.task_dialog, make)


def start_task_run(win: MainWindow, run: TaskRun) -> str | None:
    """Create the task's trace, show it, and open its turn on the endpoint."""
    from core.run.task_run import create_task_trace, endpoint_env, find_key

    def create(store: Store) -> str:
        env = endpoint_env(run, find_key(run.key_source, run.base_url))
        trace_id = create_task_trace(store, run)
        win.live.use_endpoint(trace_id, env, run.task)  # before its turn opens
        return trace_id

    return win.start_new_run("start a task", create)
