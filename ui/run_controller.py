"""Run, Pause, Step and Stop for the trace in the window (UI-6), driving the real runtime.

At most one live runner, for the session's trace, opened lazily on the first Run or Step
(``core/run/live.py:open_live_run``: the demo's scripted model served on 127.0.0.1, or the
configured endpoint) and attached at the trace's head. Everything awaits on the qasync
loop, so the window never blocks; every task started here is kept until it ends.

The runner is dropped (its context exited: model server stopped, client closed) when the
trace, the store or the head changes from outside — a rewind, an applied compaction —
and the next Step opens a fresh one attached at the new head. Until then the phase shown
is read from the store (``core/run/live.py:stored_step``).

The runner's events arrive synchronously on this thread; they become the ``run_event``
signal and a throttled ``data_changed`` (at most one per ``REFRESH_MS``), so a fast run
refreshes the panes a few times a second, not once per message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QObject, QTimer, Signal

from core.errors import CtxlensError
from core.run.events import EventBus, RunEvent
from core.run.live import (
    LiveSupport,
    event_text,
    fatal_error,
    live_support,
    next_step_text,
    open_live_run,
    stored_step,
)
from core.run.rerunners import rerunner_for
from core.run.state import Phase
from core.run.status import FINISHED_TIP as FINISHED_TIP
from core.run.status import Busy, RunState, RunStatus, run_status
from ui.session import Session
from ui.tasks import TaskRunner, reading

if TYPE_CHECKING:
    from core.run.runner import Runner

log = logging.getLogger("ctxlens.ui")


def _call_cancelled() -> type[BaseException]:
    """``CallCancelled`` without importing the model client at start-up."""
    from core.llm.errors import CallCancelled

    return CallCancelled


REFRESH_MS = 100
STATE_KEY = "run-state"


class RunError(CtxlensError):
    """The run ended on an error (the model endpoint failed for good)."""


class RunController(QObject):
    changed = Signal()
    """Busy state, phase or runnability changed: actions and the status label update."""
    data_changed = Signal()
    """The runner wrote to the trace (throttled): the panes should reload."""
    run_event = Signal(object)
    """Every ``RunEvent`` of the live runner, on the UI thread."""
    activity = Signal(str)
    """A short line about what the run is doing now."""
    failed = Signal(object)

    def __init__(
        self, session: Session, parent: QObject | None = None, tasks: TaskRunner | None = None
    ) -> None:
        """With ``tasks`` the phase of a trace just opened is read off the UI thread."""
        super().__init__(parent)
        self.session = session
        self.tasks = tasks
        self._state_job: int | None = None
        """The task reading a just-opened trace's phase (``tasks``)."""
        self.support: LiveSupport | None = None
        self.phase = Phase.IDLE
        self.next_text = ""
        self.busy: Busy = None
        self.last_stop = ""
        """Why the last Run returned: done, paused, cancelled, error."""
        self.last_activity = ""
        self._source = "these"
        """The shown trace's source (what the status line names when it cannot run)."""
        self._runner: Runner | None = None
        self._stack: AsyncExitStack | None = None
        self._bound: tuple[int, str] | None = None
        """(id of the store, trace id) the runner belongs to."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing: asyncio.Task[None] | None = None
        self._want_pause = False
        self._stopped = False
        self._intent: Literal["step", "run"] = "step"
        self._refreshing = False
        self._final_close: asyncio.Task[None] | None = None
        self._user: asyncio.Task[None] | None = None
        """The task stepping the open runner, while it does."""
        self._bus = EventBus()
        self._bus.subscribe(self._on_event)
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self._flush)
        session.changed.connect(self._session_changed)
        session.store_changed.connect(self._session_changed)
        self._endpoints: dict[str, tuple[Mapping[str, str], str]] = {}
        """Per trace: the endpoint (as an environment mapping, key included: memory only)
        and the task of a "Run a task…" run (``use_endpoint``)."""
        self.activity.connect(self._heard)

    # -- state ------------------------------------------------------------------------------
    @property
    def runnable(self) -> bool:
        return self.support is not None and self.support.runnable

    @property
    def runner(self) -> Runner | None:
        """The live runner, while one is open."""
        return self._runner

    @property
    def is_open(self) -> bool:
        return self._runner is not None

    @property
    def running(self) -> bool:
        return self.busy == "run"

    @property
    def idle(self) -> bool:
        return self.busy is None

    @property
    def settled(self) -> bool:
        """No task in flight and no refresh pending (tests, screenshots)."""
        return not self._tasks and not self._refresh.isActive()

    @property
    def reading_state(self) -> bool:
        """The phase of the trace just opened is still being read (Run and Step wait)."""
        job = self._state_job
        return job is not None and self.tasks is not None and self.tasks.running(job)

    def status(self) -> RunStatus:
        """What the Run controls say now (``core/run/status.py:run_status``)."""
        trace_id = self.session.trace_id
        return run_status(
            RunState(
                self.support,
                self._source,
                self.phase,
                self.next_text,
                self.busy,
                self._intent,
                self._want_pause,
                self.last_stop,
                trace_id is not None and trace_id in self._endpoints,
                self.last_activity,
            )
        )

    def can_step(self) -> bool:
        return self.status().can_step

    def use_endpoint(self, trace_id: str, env: Mapping[str, str], task: str) -> None:
        """Run ``trace_id`` against this endpoint, its first turn on ``task``."""
        self._endpoints[trace_id] = (env, task)
        self._read_state()

    def why_not(self) -> str:
        """Why Run/Step are disabled (a tooltip), or what they run against."""
        return self.status().why

    def _heard(self, text: str) -> None:
        self.last_activity = text

    def _here(self) -> tuple[int, str] | None:
        store, trace_id = self.session.store, self.session.trace_id
        return (id(store), trace_id) if store is not None and trace_id is not None else None

    def _session_changed(self) -> None:
        if self._refreshing:
            return  # our own refresh (``_flush`` reads the state afterwards)
        if self._user is not None:
            self.activity.emit("the run stopped: its trace is no longer the one shown")
        self._drop_runner()  # another trace or store, or the head moved from outside
        self.last_stop = ""
        self._read_state(off_thread=True)

    def _read_state(self, off_thread: bool = False) -> None:
        """Runnability and the phase of the session's trace, from the store (or the runner);
        ``off_thread`` (a trace opened): the phase is read on the task runner, if any."""
        trace = self.session.current()
        env = self._endpoints.get(trace.id, (None, ""))[0] if trace is not None else None
        self.support = live_support(trace, env) if trace is not None else None
        self._source = trace.source if trace is not None else "these"
        store = self.session.store
        if self.tasks is not None:
            self.tasks.cancel(STATE_KEY)
        if self._runner is not None:
            self.phase, self.next_text = self._runner.phase, next_step_text(self._runner)
        elif trace is None or store is None or self.support is None or not self.support.runnable:
            self.phase, self.next_text = Phase.IDLE, ""
        elif off_thread and self.tasks is not None:
            self.phase, self.next_text = Phase.IDLE, ""
            here = self._here()
            self._state_job = self.tasks.submit(
                "read the run's phase",
                reading(store, stored_step, trace.id),
                lambda step: self._stored(here, step),
                on_error=self._state_failed,
                key=STATE_KEY,
                priority=2,  # before the panes' queued reports: the controls wait for it
            )
        else:
            with store.read() as r:
                self.phase, self.next_text = stored_step(r, trace.id)
        self.changed.emit()

    def _state_failed(self, exc: BaseException) -> None:
        self.failed.emit(exc)
        self.changed.emit()  # no longer reading: the controls say what they can

    def _stored(self, here: tuple[int, str] | None, step: tuple[Phase, str]) -> None:
        """The phase read for a trace just opened (unless a runner opened meanwhile)."""
        if self._runner is None and here == self._here():
            self.phase, self.next_text = step
            self.changed.emit()

    # -- slots ------------------------------------------------------------------------------
    def step(self) -> bool:
        """One phase: one model call, one tool, a prepare or a bookkeeping step (on a fresh
        demo trace: open the turn)."""
        return self._start("step")

    def run(self) -> bool:
        """Step until the turn is done or Pause is pressed."""
        return self._start("run")

    def can_pause(self) -> bool:
        return self.status().can_pause

    def pause(self) -> None:
        """Stop Run at the next step boundary (the current step finishes)."""
        if not self.can_pause():
            return
        self._want_pause = True
        if self._runner is not None:
            self._runner.pause()
        self.activity.emit("pausing after this step…")
        self.changed.emit()

    def can_stop(self) -> bool:
        return self.status().can_stop

    def stop(self) -> None:
        """Abandon an in-flight model call now (a cancelled runner is not reused: the next
        Step opens a fresh one at the head)."""
        if not self.can_stop():
            return
        self._want_pause = self._stopped = True
        if self._runner is not None:
            self._runner.pause()
            self._runner.cancel()
        self.activity.emit("stopping…")

    def start_turn(self) -> bool:
        """Open the demo's turn on the (fresh, demo) trace, ready to Step or Run."""
        return self._start("step")

    def _start(self, what: Literal["step", "run"]) -> bool:
        if not self.can_step():
            self.activity.emit(self.why_not())
            return False
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.failed.emit(RuntimeError("the run controls need the window's asyncio loop"))
            return False
        self._want_pause = self._stopped = False
        self._intent = what
        self.last_stop = ""
        self._set_busy("opening" if self._runner is None else what)
        self._spawn(self._drive(what))
        return True

    # -- the async side ---------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.failed.emit(task.exception())

    async def _drive(self, what: Literal["step", "run"]) -> None:
        me = asyncio.current_task()
        try:
            runner = await self._open()
            if self._bound != self._here() or self._stopped:
                self._drop_runner()  # the trace changed, or Stop was pressed, while opening
                return
            self._user = me
            self._set_busy(what)
            if runner.phase is Phase.IDLE:
                await runner.start_turn(self._first_task(runner))
            elif what == "step":
                await runner.step()
            elif not self._want_pause:
                result = await runner.run()
                if runner is self._runner:  # not dropped meanwhile (another trace shown)
                    self.last_stop = result.stopped
                    if result.stopped == "cancelled":
                        self._drop_runner()
        except _call_cancelled():
            self.last_stop = "cancelled"
            self._drop_runner()
        except Exception as exc:
            self.failed.emit(exc)
        finally:
            if self._stopped:
                self._drop_runner()
            if self._user is me:
                self._user = None
            self._set_busy(None)
            self._read_state()
            self._refresh_now()

    def _first_task(self, runner: Runner) -> str:
        """The task of a fresh trace: the one given with its endpoint (Run a task…), else
        its source's (the demo's, the delegation demo's: ``Rerunner.task``)."""
        endpoint = self._endpoints.get(runner.trace_id)
        if endpoint is not None:
            return endpoint[1]
        with runner.store.read() as r:
            rerunner = rerunner_for(r.trace(runner.trace_id).metadata)
        if rerunner is not None and rerunner.task is not None:
            return rerunner.task()
        from core.demo.scenario import TASK

        return TASK

    async def _open(self) -> Runner:
        if self._runner is not None and self._bound != self._here():
            self._drop_runner()
        if self._closing is not None:
            await asyncio.wait([self._closing])  # its failure is reported by _task_done
        if self._runner is not None:
            return self._runner
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            raise CtxlensError("no trace is open")
        stack = AsyncExitStack()
        env = self._endpoints.get(trace_id, (None, ""))[0]
        runner = await stack.enter_async_context(open_live_run(store, trace_id, self._bus, env))
        self._stack, self._runner, self._bound = stack, runner, (id(store), trace_id)
        runner.attach()
        return runner

    def _drop_runner(self) -> None:
        """Exit the runner's context soon (stopping it first if a step is in flight)."""
        runner, stack = self._runner, self._stack
        self._runner, self._stack, self._bound = None, None, None
        if runner is None or stack is None:
            return
        user = self._user
        if user is not None:  # a step is in flight: abandon its model call, then close
            runner.pause()
            runner.cancel()
        self._closing = self._spawn(self._close(stack, user))

    async def _close(self, stack: AsyncExitStack, user: asyncio.Task[None] | None) -> None:
        current = asyncio.current_task()
        if user is not None and not user.done():
            await asyncio.wait([user])  # never close the client under a running step
        try:
            await stack.aclose()
        finally:
            if self._closing is current:
                self._closing = None

    async def aclose(self) -> None:
        """Stop and close everything (the window is closing; tests)."""
        self._drop_runner()
        while self._tasks:
            await asyncio.wait(list(self._tasks))
        self._refresh.stop()

    def needs_close(self) -> bool:
        return self._runner is not None or bool(self._tasks)

    def close_then(self, done: Callable[[], object]) -> None:
        """Close asynchronously, then call ``done`` (the window closes itself again)."""

        async def closing() -> None:
            await self.aclose()
            done()

        self._final_close = asyncio.ensure_future(closing())

    # -- events and refresh -----------------------------------------------------------------
    def _on_event(self, event: RunEvent) -> None:
        self.run_event.emit(event)
        text = event_text(event)
        if text is not None:
            self.activity.emit(text)
        error = fatal_error(event)
        if error is not None:
            self.failed.emit(RunError(f"the run stopped on an error: {error}"))
        if event.type != "text_delta" and not self._refresh.isActive():
            self._refresh.start()

    def _refresh_now(self) -> None:
        self._refresh.stop()
        self._flush()

    def _flush(self) -> None:
        if self.session.store is None or self.session.trace_id is None:
            return
        self._refreshing = True
        try:
            self.data_changed.emit()
        finally:
            self._refreshing = False
        self._read_state()

    def _set_busy(self, busy: Busy) -> None:
        self.busy = busy
        self.changed.emit()
