"""WAL checkpoints on a thread of their own, not inside a writer's COMMIT.

SQLite's automatic checkpoint runs in the COMMIT that takes the WAL past 1000 pages: that
commit copies the WAL into the database file and syncs both, ~20 ms here against ~3.5 ms
for a commit without one, so every other import of a 3 MB session paid it, and a run loop
stalled on it every few hundred steps. ctxlens turns the automatic checkpoint off on its
connections (``core/store/engine.py:_on_sqlite_connect``) and runs a PASSIVE checkpoint
here after write transactions, as SQLite suggests for applications that care about write
latency: PASSIVE never waits for and never blocks readers or writers; the sqlite3 module
lets go of the GIL while it works. At most one checkpoint per ``MIN_INTERVAL``; pokes in
between are coalesced. If a process stops, its WAL is checkpointed by the next connection
to close the database, as with SQLite's own checkpoints.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

#: Seconds between two checkpoints at most (a run commits every step).
MIN_INTERVAL = 0.2


class Checkpointer:
    """Checkpoints one SQLite file's WAL after writes, on a daemon thread."""

    def __init__(self, path: Path, interval: float = MIN_INTERVAL) -> None:
        self.path = path
        self.interval = interval
        """Seconds between two checkpoints at most (``MIN_INTERVAL`` unless a process that
        writes little and often asks for longer: ``app/commands/proxy.py``)."""
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.checkpoints = 0
        """Checkpoints run so far (for tests)."""

    def poke(self) -> None:
        """A write transaction committed: checkpoint soon."""
        with self._lock:
            if self._stopped.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="ctxlens-checkpoint", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def close(self) -> None:
        """Stop the thread (a checkpoint under way finishes first)."""
        with self._lock:
            self._stopped.set()
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()

    def _loop(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            while True:
                self._wake.wait()
                if self._stopped.is_set():
                    return
                self._wake.clear()
                started = time.monotonic()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.Error:
                    pass  # the next write pokes again; SQLite checkpoints at close anyway
                rest = self.interval - (time.monotonic() - started)
                if rest > 0:
                    self._stopped.wait(rest)  # a close does not wait out the interval
        finally:
            conn.close()
