"""Background work for the window: store queries run on a thread pool, results come back
as queued signals on the UI thread (workers never touch widgets).

A task gets a ``TaskControl`` (a cancel event and a progress callback). Submitting a task
with a ``key`` cancels the previous task with that key, so a new search supersedes the old
one and a stale result is never shown. A ``drain`` task (an import, opening a store) is
different: cancelling it only asks it to stop, and its result still arrives, because the
work it finished (traces written, a connection opened) must be handled, not dropped.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

if TYPE_CHECKING:
    from core.store import Store
    from core.store.reader import Reader

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")


@dataclass
class TaskControl:
    cancel: threading.Event = field(default_factory=threading.Event)
    report: Callable[[Any], None] = lambda n: None
    """Progress: a count, or ``(done, total)``; delivered on the UI thread."""

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()


def reading(
    store: Store, read: Callable[Concatenate[Reader, P], T], *args: P.args, **kwargs: P.kwargs
) -> Callable[[TaskControl], T]:
    """The task that runs ``read(reader, *args)`` in one read transaction of ``store``: how
    a pane reads the store off the UI thread."""

    def task(_c: TaskControl) -> T:
        with store.read() as r:
            return read(r, *args, **kwargs)

    return task


class _Relay(QObject):
    """Lives on the UI thread; workers emit on it, so slots run on the UI thread."""

    done = Signal(int, object)
    failed = Signal(int, object)
    progress = Signal(int, object)


class _Job(QRunnable):
    def __init__(self, job_id: int, fn: Callable[[TaskControl], Any], relay: _Relay) -> None:
        super().__init__()
        self.job_id = job_id
        self.fn = fn
        self.relay = relay
        self.control = TaskControl(report=lambda n: relay.progress.emit(job_id, n))

    def run(self) -> None:
        try:
            result = self.fn(self.control)
        except BaseException as exc:  # reported on the UI thread
            self.relay.failed.emit(self.job_id, exc)
        else:
            self.relay.done.emit(self.job_id, result)


@dataclass
class _Pending:
    job: _Job
    label: str
    key: str | None
    on_done: Callable[[Any], None]
    on_error: Callable[[BaseException], None] | None
    on_progress: Callable[[Any], None] | None = None
    drain: bool = False


class TaskRunner(QObject):
    """Runs callables off the UI thread; tracks what is running for progress and tests."""

    busy_changed = Signal(bool)
    progress = Signal(str, object)
    """Label of a running task and its progress: a count or ``(done, total)``."""
    error = Signal(object)
    """A task failed and had no error callback of its own."""

    def __init__(self, parent: QObject | None = None, threads: int = 2) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        self._relay = _Relay(self)
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._relay.progress.connect(self._on_progress)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}

    def submit(
        self,
        label: str,
        fn: Callable[[TaskControl], Any],
        on_done: Callable[[Any], None],
        on_error: Callable[[BaseException], None] | None = None,
        key: str | None = None,
        on_progress: Callable[[Any], None] | None = None,
        drain: bool = False,
        priority: int = 0,
    ) -> int:
        """Run ``fn`` on the pool; a higher ``priority`` starts before queued work."""
        if key is not None:
            self.cancel(key)
        job_id = next(self._ids)
        job = _Job(job_id, fn, self._relay)
        job.setAutoDelete(False)
        was_idle = not self._pending
        self._pending[job_id] = _Pending(job, label, key, on_done, on_error, on_progress, drain)
        self.pool.start(job, priority)
        if was_idle:
            self.busy_changed.emit(True)
        return job_id

    def cancel(self, key: str | None = None) -> None:
        """Cancel tasks with ``key`` (all tasks when ``None``); their results are dropped,
        except a ``drain`` task's, which is only asked to stop."""
        for job_id, p in list(self._pending.items()):
            if key is None or p.key == key:
                p.job.control.cancel.set()
                if not p.drain:
                    self._forget(job_id)

    def stop(self, job_id: int) -> None:
        """Ask one task to stop; a ``drain`` task still delivers what it returns."""
        p = self._pending.get(job_id)
        if p is None:
            return
        p.job.control.cancel.set()
        if not p.drain:
            self._forget(job_id)

    def running(self, job_id: int) -> bool:
        return job_id in self._pending

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def labels(self) -> list[str]:
        return [p.label for p in self._pending.values()]

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until every started job returned (tests, shutdown)."""
        return bool(self.pool.waitForDone(msecs))

    def shutdown(self) -> None:
        """Stop everything and wait; results still queued are not delivered any more."""
        self.cancel()
        self.pool.waitForDone(10_000)
        self._pending.clear()

    def _forget(self, job_id: int) -> _Pending | None:
        p = self._pending.pop(job_id, None)
        if p is not None and not self._pending:
            self.busy_changed.emit(False)
        return p

    def _on_done(self, job_id: int, result: object) -> None:
        p = self._forget(job_id)
        if p is not None:
            p.on_done(result)

    def _on_failed(self, job_id: int, exc: BaseException) -> None:
        p = self._forget(job_id)
        if p is None or (p.job.control.cancelled and not p.drain):
            return
        if p.on_error is not None:
            p.on_error(exc)
        else:
            log.error("task %r failed", p.label, exc_info=exc)
            self.error.emit(exc)

    def _on_progress(self, job_id: int, value: object) -> None:
        p = self._pending.get(job_id)
        if p is not None:
            if p.on_progress is not None:
                p.on_progress(value)
            self.progress.emit(p.label, value)
