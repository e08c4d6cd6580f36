"""A trace builder that can first re-read what it already wrote, then go on writing.

A live import keeps the importer's state (open units, id maps, lanes) between batches.
After a restart that state is rebuilt by feeding the importer the same batches again with
``replaying`` set: sequences are predicted exactly as the first time (the batches end where
they ended then), and nothing is written. Then ``replaying`` is cleared and new lines are
written as new messages of the same trace.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from core.errors import NotFoundError
from core.importers.base import TraceBuilder
from core.records import CompactionEvent, LlmCall
from core.store import schema as t


class ResumableBuilder(TraceBuilder):
    replaying = False

    def _cut(self) -> None:
        if self.replaying:
            self._pending, self._counts = [], []
            return
        super()._cut()

    def compaction(self, *args: Any, **kwargs: Any) -> CompactionEvent:
        if not self.replaying:
            return super().compaction(*args, **kwargs)
        self._synced()
        self.compactions += 1
        event = self.w.read.compactions(self.trace_id)[self.compactions - 1]
        self._track_boundary(event)
        return event

    def _track_boundary(self, event: CompactionEvent) -> None:
        """The base builder's in-memory tree learns a stored boundary (rebuilt contexts of
        later calls start from it, ``core/importers/calls.py:PathTracker``)."""
        self.paths.compaction(event.at_sequence, tuple(event.context_after))
        self._boundaries.append(event)

    def llm_call(self, *args: Any, **kwargs: Any) -> LlmCall:
        if not self.replaying:
            return super().llm_call(*args, **kwargs)
        self.llm_calls += 1
        try:
            return self.w.read.llm_call(self.trace_id, self.llm_calls - 1)
        except NotFoundError:  # e.g. a trace watched before live capture recorded calls
            raise NotFoundError(
                f"cannot continue trace {self.trace_id}: a replay of its batches makes model "
                f"call {self.llm_calls - 1}, which the store does not hold; read anew"
            ) from None

    def set_call_usage(self, call_index: int, usage: Any) -> None:
        if not self.replaying:  # a replay passes a change the store has already
            super().set_call_usage(call_index, usage)

    def set_call_response(self, call_index: int, sequence: int, created_at: float) -> None:
        if not self.replaying:
            super().set_call_response(call_index, sequence, created_at)

    def ref(self, kind: str, *args: Any, **kwargs: Any) -> str:
        if not self.replaying:
            return super().ref(kind, *args, **kwargs)
        self._refs += 1
        return f"{self.trace_id}-{kind}-{self._refs}"

    def set_title(self, title: str) -> None:
        if self.replaying:
            self.title = title or self.title
            return
        super().set_title(title)

    def set_metadata(self, key: str, value: Any) -> None:
        if self.replaying:  # the store holds it already: kept in memory only
            self.metadata = {**(self.metadata if isinstance(self.metadata, dict) else {}),
                             key: value}  # fmt: skip
            return
        super().set_metadata(key, value)

    def continue_stored(self) -> None:
        """Go on after what the store holds for this trace (no replay: the counters and the
        next sequence are read back)."""
        r = self.w.read
        self._next = self.w.next_sequence(self.trace_id)
        self.llm_calls = r.llm_call_count(self.trace_id)
        events = r.compactions(self.trace_id)
        self.compactions = len(events)
        self._last_main = self.w.head(self.trace_id)
        m = t.messages.c
        q = (
            select(m.sequence, m.parent_sequence, m.kind)
            .where(m.trace_id == self.trace_id)
            .order_by(m.sequence)
        )
        for seq, parent, kind in r.conn.execute(q):
            self.paths.add(seq, parent, kind)
        for event in events:
            self._track_boundary(event)

    def matches_store(self) -> bool:
        """After a replay: the store holds exactly what was predicted (same importer)."""
        self.flush()
        r = self.w.read
        return (
            self.next_sequence == self.w.next_sequence(self.trace_id)
            and self.compactions == len(r.compactions(self.trace_id))
            and self.llm_calls == r.llm_call_count(self.trace_id)
        )
