"""Spans arriving over many OTLP requests, grouped into growing traces.

Each OpenTelemetry trace id is one ctxlens trace, kept open with the file importer's own
per-trace state (``core/importers/otel.py:_Trace``): a request's spans join the spans seen
before (parents may come later than children: a batch exporter sends a span when it ends)
and its LLM and tool spans are written in start order, through the same code as a file
import (input messages matched to stored ones, output appended, one LLM call each).
Spans that come in after a later span of the same trace are still written, after it; a
span sent again (an exporter's retry) is written once.
After a restart a trace id seen before continues its stored trace: the main conversation's
messages are matched again by the importer's own keys (``_Lane.by_key``), so nothing is
written twice.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from core.importers.base import ImportContext, TraceBuilder
from core.importers.content import as_dict, scrub
from core.importers.otel import FORMAT, _key, _Lane, _Trace
from core.importers.otel_spans import Span, otlp_spans
from core.live.builder import ResumableBuilder
from core.live.source import LiveChange
from core.store.store import Store
from core.store.writer import Writer


@dataclass
class _Open:
    trace: _Trace
    builder: TraceBuilder
    seen: set[str] = field(default_factory=set)
    """Span ids written already: an exporter sends a batch again after a timeout or a 503,
    and the same span must not become a second model call (the second post doubled the
    trace's calls and cost)."""
    start: float = float("inf")
    """The earliest span start written (the trace's ``created_at``, as imported)."""
    titled: bool = False
    """The title is the first request, as an import of the same spans has it (until one
    arrives: the root span's name)."""


class SpanSink:
    """Writes spans into ``store`` as they arrive; safe to call from many threads."""

    def __init__(self, store: Store, source: str = "otlp") -> None:
        self.store = store
        self.source = source
        self.open: dict[str, _Open] = {}
        self._lock = threading.Lock()
        self._order = 0

    def add(self, doc: dict[str, Any], where: str = "") -> tuple[list[LiveChange], int]:
        """Write the spans of one request; returns the changes and how many spans were
        rejected (no trace or span id)."""
        with self._lock:
            spans = list(otlp_spans(doc, self._order))
            self._order += len(spans)
            good = [s for s in spans if s.trace_id and s.span_id]
            groups: dict[str, list[Span]] = {}
            for s in good:
                groups.setdefault(s.trace_id, []).append(s)
            changes = []
            try:
                with self.store.write() as w:
                    for tid, group in groups.items():
                        changes.append(self._write(w, tid, group, where))
            except BaseException:
                self.open.clear()  # rolled back: their in-memory state is ahead of the store
                raise
            return changes, len(spans) - len(good)

    def _write(self, w: Writer, tid: str, spans: list[Span], where: str) -> LiveChange:
        got = self.open.get(tid)
        new = got is None
        if got is None:
            got = self._start(w, tid, spans)
        b, t = got.builder, got.trace
        b.w = w
        before = b.messages
        spans = [s for s in spans if s.span_id not in got.seen]  # sent again: written once
        got.seen.update(s.span_id for s in spans)
        t.by_id.update({s.span_id: s for s in spans})
        t.agent_of.clear()  # a parent that just arrived may change a span's agent
        spans.sort(key=lambda s: (s.start, s.order))
        t.run(spans)
        for s in spans:  # the trace's span is the first start to the last end, as imported
            b.saw_time(s.start)
            b.saw_time(s.end)
        starts = [s.start for s in spans if s.start]
        if starts and min(starts) < got.start:  # an agent span ends, and arrives, after its
            got.start = min(starts)  # calls: the trace starts when it started
            w.set_created_at(b.trace_id, got.start)
        self._title(got, spans)
        b.finish()
        self.open[tid] = got
        return LiveChange(self.source, b.trace_id, new, b.messages - before, where)

    def _title(self, got: _Open, spans: list[Span]) -> None:
        """What was asked first (``core/importers/otel.py:run``'s title), else the root
        span's name; once a request is in, the title stays."""
        if got.titled:
            return
        first = got.builder.first_text()
        if first:
            got.builder.set_title(first)
            got.titled = True
            return
        for s in spans:
            if not s.parent_id:
                got.builder.set_title(s.name)

    def _start(self, w: Writer, tid: str, spans: list[Span]) -> _Open:
        ctx = ImportContext()
        first = min(spans, key=lambda s: (s.start, s.order))
        stored = self._stored(w, tid)
        meta = scrub({"trace_id": tid, "live": True, "service": first.attrs.get("service.name")})
        b = ResumableBuilder(
            w, ctx, FORMAT, self.source, first.name, meta, first.start or None, trace_id=stored
        )
        t = _Trace(b, ctx, [])
        seen: set[str] = set()
        start = first.start or float("inf")
        if stored is not None:
            b.continue_stored()
            t.main, seen = _resumed(w, stored)
            t.lanes["main"] = t.main
            trace = w.read.trace(stored)
            start = trace.created_at
            span = as_dict(as_dict(trace.metadata).get("recorded_span"))
            for edge in (span.get("start"), span.get("end")):  # the span so far goes on
                if isinstance(edge, int | float):  # (this run's spans widen it)
                    b.saw_time(float(edge))
        return _Open(t, b, seen, start)

    def _stored(self, w: Writer, tid: str) -> str | None:
        """The trace an earlier run of the receiver wrote for this OpenTelemetry trace id."""
        for trace in reversed(w.read.traces()):
            meta = trace.metadata if isinstance(trace.metadata, dict) else {}
            if trace.source == FORMAT and meta.get("live") and meta.get("trace_id") == tid:
                return trace.id
        return None


def _resumed(w: Writer, trace_id: str) -> tuple[_Lane, set[str]]:
    """What an earlier run of the receiver left, in one read of the stored trace: the main
    conversation as the importer would hold it after writing these messages, and the spans
    it wrote (a model call's ``params.span_id``, a message's ``metadata.span_id``: sent
    again after a restart, they are not written twice; a tool span's result came back as a
    second message, in its agent's lane)."""
    seen = {
        str(c.params["span_id"])
        for c in w.read.llm_calls(trace_id)
        if isinstance(c.params, dict) and c.params.get("span_id")
    }
    lane = _Lane(None, None, "main")
    answered = set()
    for m in w.read.all_messages(trace_id):
        if isinstance(m.metadata, dict) and m.metadata.get("span_id"):
            seen.add(str(m.metadata["span_id"]))
        if m.branch_type is not None:
            continue
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls]
        key = _key(
            {"role": m.role, "content": m.content, "calls": calls, "call_id": m.tool_call_id}
        )
        lane.by_key[key] = m.sequence
        lane.seqs.append(m.sequence)
        lane.tail, lane.agent_name = m.sequence, m.agent_name
        lane.open_calls.extend((c.id, c.name) for c in m.tool_calls)
        if m.tool_call_id:
            answered.add(m.tool_call_id)
    lane.open_calls = [c for c in lane.open_calls if c[0] not in answered]
    return lane, seen
