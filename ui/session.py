"""The open store and the trace being inspected; every pane listens to this one object.

Panes never keep their own idea of "the current trace": they reload when ``changed`` fires
(a new store, another trace, or a moved head after a rewind).

Opening a trace the window already knows (the trace list holds its record, read off the
UI thread) reads nothing: ``select_trace`` takes the record, and ``current`` answers from
it until the trace's data changes (``refresh``, ``rewind``). ``trace`` always reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:  # the store loads SQLAlchemy: on the first open, not at start-up
    from core.records import Trace
    from core.store import Store


class Session(QObject):
    store_changed = Signal()
    """Another store was opened (the trace list changes)."""
    changed = Signal()
    """The trace or its head changed: everything derived from it must reload."""
    closing = Signal()
    """The store is about to close (live sources writing to it stop first)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store: Store | None = None
        self.trace_id: str | None = None
        self._record: Trace | None = None
        """The trace's record as of its selection (its head may have moved since)."""

    def open_store(self, target: str | Path) -> Store:
        from core.store import Store

        return self.adopt(Store.open(target))

    def adopt(self, store: Store) -> Store:
        """Make an already opened store (e.g. opened off the UI thread) the current one."""
        self.close()
        self.store = store
        self.store_changed.emit()
        return store

    def refresh(self) -> None:
        """The trace's data changed (a compaction was recorded): every pane reloads."""
        self._record = None
        self.changed.emit()

    def close(self) -> None:
        if self.store is not None:
            self.closing.emit()
            self.store.close()
        self.store = None
        self.trace_id = None
        self._record = None

    def select_trace(self, trace_id: str | None, record: Trace | None = None) -> None:
        """Show ``trace_id`` (a unique prefix will do). With its ``record`` (the trace
        list's) nothing is read on this thread."""
        if record is not None and record.id == trace_id and self.store is not None:
            self._record = record
        elif self.store is not None and trace_id is not None:
            self._record = self.store.trace(trace_id)  # accepts a unique prefix
            trace_id = self._record.id
        else:
            self._record = None
        self.trace_id = trace_id
        self.changed.emit()

    def trace(self) -> Trace | None:
        """The trace's record, read now (its head is current)."""
        if self.store is None or self.trace_id is None:
            return None
        self._record = self.store.trace(self.trace_id)
        return self._record

    def current(self) -> Trace | None:
        """The trace's record as of its selection or last read (title, source, metadata;
        read only when the trace's data changed since): what the title and the run
        controls show on opening a trace without reading the store."""
        if self.store is None or self.trace_id is None:
            return None
        if self._record is not None and self._record.id == self.trace_id:
            return self._record
        return self.trace()

    def rewind(self, sequence: int) -> tuple[int | None, int]:
        """Move the head back (STORE-4) and tell every pane."""
        if self.store is None or self.trace_id is None:
            raise RuntimeError("no trace is open")
        moved = self.store.rewind(self.trace_id, sequence)
        self._record = None
        self.changed.emit()
        return moved
