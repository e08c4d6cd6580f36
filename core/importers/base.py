"""What every importer shares: the result record, the run context, and the trace builder.

An importer reads one source (a file, a folder) and writes one or more traces through a
``TraceBuilder``. The builder predicts sequence numbers so an importer can link records
(parents, tool calls, compaction anchors) while it streams, batches straight chains into
one insert, and counts what it wrote: the numbers in an ``ImportResult`` are what the store
holds, not what the importer meant to write.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.context.view import NOT_SENT, resolve, token_breakdown
from core.errors import ImportCancelled
from core.importers.calls import ContextHashes, FreshMessages, PathTracker
from core.importers.counting import NOT_COUNTED, CountsAhead
from core.importers.times import UNKNOWN_ZONE, naive_times_read
from core.importers.titles import request_title
from core.importers.usage import normalize_usage
from core.records import CompactionEvent, ContextItem, ContextRef, LlmCall, NewMessage
from core.store.triggers import PENDING_TOKENS
from core.store.writer import Writer
from core.undated import IMPORT_TIME, KEY, TRACE_START, record, undated_of

Progress = Callable[[int, int], None]

PendingReply = tuple[int | None, int | None, Any, str, float]
"""``(head, reply, usage, model, when)``: a model response an importer keeps while it reads
and records as a call at the end (``TraceBuilder.reply_calls``); ``reply`` is ``None``
when the source logged no output for it."""


@dataclass(frozen=True)
class ImportResult:
    """One imported trace: the ``ctxlens import --json`` contract keys, plus extras."""

    path: str
    format: str
    trace_id: str
    messages: int
    tool_calls: int
    compactions: int
    subagents: int
    warnings: tuple[str, ...] = ()
    llm_calls: int = 0
    duplicate: bool = False
    """True when the same content was imported before; ``trace_id`` is the existing trace."""
    error: str | None = None
    """Why this unit was not imported (only when errors are collected, not raised)."""

    def to_json(self) -> dict[str, Any]:
        out = {
            "path": self.path,
            "format": self.format,
            "trace_id": self.trace_id,
            "messages": self.messages,
            "tool_calls": self.tool_calls,
            "compactions": self.compactions,
            "subagents": self.subagents,
            "warnings": list(self.warnings),
            "llm_calls": self.llm_calls,
            "duplicate": self.duplicate,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class ImportUnit:
    """One thing to import as a whole: a session file with its subagent files, a folder
    of events, a log with many samples. Everything in it is written in one transaction."""

    format: str
    path: Path
    """What the user named (a file, or the folder of a multi-file trace)."""
    files: tuple[Path, ...]
    """Every file read, the main one first (hashed together for re-import detection)."""

    @property
    def main(self) -> Path:
        return self.files[0] if self.files else self.path


@dataclass
class ImportContext:
    """Per-run state: progress reporting, cancellation and the warnings of the current unit."""

    progress: Progress | None = None
    cancel: threading.Event | None = None
    total_bytes: int = 0
    done_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: dict[str, tuple[int, str]] = field(default_factory=dict)
    where: str = ""
    """File and line being read (names the place when an unexpected error escapes)."""
    counts: CountsAhead | None = None
    """Set by ``ctxlens import``: messages are counted while they are read and written with
    their counts (``TraceBuilder`` holds a chain until they are known)."""
    finite_json: bool = True
    """No line of the current unit needed ``json`` to be read, so nothing read holds NaN or
    an infinity (orjson refuses both): JSON columns need no check for them."""
    naive_from: int | None = None
    """``core/importers/times.py:naive_times_read`` when the current unit (or the source of
    its current trace: ``source_begins``) began: a trace whose source read more has times
    without a zone (``TraceBuilder.finish``)."""
    _last_report: float = 0.0

    def source_begins(self) -> None:
        """The next trace's source is read from here: the times without a zone that count
        for it are those read from now on (``naive_from``). An importer that makes several
        traces of one unit, one after another (an eval's samples), calls it before reading
        each; otherwise one sample's naive times marked every later sample of the file."""
        self.naive_from = naive_times_read()

    def advance(self, nbytes: int) -> None:
        """Count bytes read; honour cancel at once; report progress (at most every 50 ms)."""
        self.done_bytes += nbytes
        if self.cancel is not None and self.cancel.is_set():
            raise ImportCancelled("import cancelled")
        now = time.monotonic()
        if now - self._last_report >= 0.05:
            self._last_report = now
            if self.progress is not None:
                self.progress(min(self.done_bytes, self.total_bytes), self.total_bytes)

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise ImportCancelled("import cancelled")

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def note(self, what: str, where: str) -> None:
        """A repeated, skippable oddity: reported once with a count (``flush_notes``)."""
        count, first = self.notes.get(what, (0, where))
        self.notes[what] = (count + 1, first)

    def flush_notes(self) -> None:
        for what, (count, first) in self.notes.items():
            self.warn(f"{first}: {what}" if count == 1 else f"{first}: {what} ({count} times)")
        self.notes.clear()


@dataclass
class _Chain:
    """A straight run of messages cut for writing, with their counts (``None`` where a
    ticket of ``CountsAhead`` stands for the count)."""

    messages: list[NewMessage]
    counts: list[int]
    tickets: list[int | None]
    parent: int | None
    first: int

    @property
    def chars(self) -> int:
        return sum(len(nm.content) for nm in self.messages)


class TraceBuilder:
    """Writes one trace inside the caller's transaction, predicting sequence numbers.

    ``add`` returns the sequence the message will get; straight chains are buffered and
    appended in batches. The head never moves on its own: ``finish`` sets it.
    """

    BATCH = 256
    HELD_CHARS = 4_000_000
    """Most text held in chains waiting for their counts (``CountsAhead``): beyond it the
    builder waits for the oldest, so memory stays bounded."""

    def __init__(
        self,
        w: Writer,
        ctx: ImportContext,
        fmt: str,
        path: str,
        title: str = "",
        metadata: Any = None,
        created_at: float | None = None,
        trace_id: str | None = None,
        span: tuple[float, float] | None = None,
    ) -> None:
        """``span``: the recorded start and end when the importer knows them before it
        writes (then they go in with the metadata, no update at ``finish``).

        A message added without a time gets one fill time, ``undated_at``: the recorded
        start (``span``'s, else ``created_at``, the file's own date) when given here, else
        the import time; a continued trace keeps the fill it has. ``finish`` records which
        messages those are (``core/undated.py``, metadata ``undated``)."""
        if span is not None:
            meta = dict(metadata) if isinstance(metadata, dict) else {}
            metadata = {**meta, "recorded_span": {"start": span[0], "end": span[1]}}
            created_at = span[0] if created_at is None else created_at
        self.w = w
        self.ctx = ctx
        self.format = fmt
        self.path = path
        continued = trace_id is not None
        if trace_id is None:
            trace_id = w.create_trace(title, fmt, metadata, created_at=created_at).id
        self.trace_id = trace_id
        """The trace written (``trace_id`` given: one that exists, continued by live capture)."""
        self.metadata = metadata
        self.model = ""
        """The model of the last recorded call (the trace's model, for its window)."""
        self.title = title
        self.messages = 0
        self.tool_calls = 0
        self.tool_errors = 0
        """Tool results the file marked as errors (``metadata["is_error"]``)."""
        self.compactions = 0
        self.llm_calls = 0
        self.subagents: set[str] = set()
        self._next = 0
        self.json_from_reader = False
        """Set by an importer whose JSON values all come from ``reading.iter_jsonl`` (no
        JSON parsed elsewhere, no float computed): then ``ctx.finite_json`` holds for them."""
        self._pending: list[NewMessage] = []
        self._counts: list[int] = []
        self._tickets: list[int | None] = []
        self._ahead = ctx.counts
        self._held: deque[_Chain] = deque()
        self._held_chars = 0
        self._pending_parent: int | None = None
        self._last_main: int | None = None
        """The most recently added main-line message (the head ``finish`` sets by default)."""
        self._refs = 0
        self._warnings_from = len(ctx.warnings)
        self._naive_from = naive_times_read() if ctx.naive_from is None else ctx.naive_from
        """Naive times read before this trace's source was (its unit's start, where known:
        an importer may read a unit's times before it builds the traces)."""
        self._dated = created_at is not None
        self._span_known = span is not None
        self._span: list[float] | None = None
        """``[earliest, latest]``, moved in place (times come mostly in order: one
        comparison per message, no new pair)."""
        self._created_at = created_at
        """Earliest and latest time the source recorded (messages, calls): the trace's
        start and duration, where the source dates anything."""
        self._hashes: ContextHashes | None = None
        self.paths = PathTracker()
        self._fresh = FreshMessages()
        self._boundaries: list[CompactionEvent] = []
        self._count_after: set[int] = set()
        """Boundaries (index in ``_boundaries``) whose tokens after are still to count."""
        self._settled: set[int] = set()
        self._undated: list[list[int]] = []
        """Inclusive ranges of the sequences added without a time (``core/undated.py``)."""
        self._replies = [0, 0]
        """Replies given to ``reply_calls`` and the path entries of their contexts."""
        self._replies_dropped = False
        # a new trace's metadata may hold an ``undated`` key of its own (a ctxlens export
        # re-imported): only a continued trace has a fill to keep
        stored = undated_of(w.trace_metadata(trace_id)) if continued else None
        self.undated_at: float
        """The ``created_at`` of every message added without one."""
        if stored is not None:  # a live trace goes on: its messages keep one fill
            self.undated_at, self._filled_with = stored.at, stored.filled_with
            self._undated = [list(r) for r in stored.sequences]
        elif span is not None or created_at is not None:
            self.undated_at = span[0] if span is not None else created_at  # type: ignore[assignment]
            self._filled_with = TRACE_START
        else:
            self.undated_at, self._filled_with = time.time(), IMPORT_TIME

    # -- messages ---------------------------------------------------------------------
    def add(self, nm: NewMessage, parent: int | None) -> int:
        """Queue ``nm`` as a child of ``parent``; returns its sequence number."""
        seq = self._next
        if not (self._pending and parent == seq - 1) or len(self._pending) >= self.BATCH:
            self._cut()
            self._pending_parent = parent
        when = nm.created_at
        if when:
            self.saw_time(when)
        else:  # no recorded time: the fill, and the trace says so (``_record_times``)
            if when is not None:
                nm = replace(nm, created_at=None)
            undated = self._undated
            if undated and undated[-1][1] == seq - 1:
                undated[-1][1] = seq
            else:
                undated.append([seq, seq])
        self._pending.append(nm)
        tokens = nm.token_count
        ticket = None
        if tokens is None:
            tokens = 0 if nm.kind in NOT_COUNTED else PENDING_TOKENS
            if tokens == PENDING_TOKENS and self._ahead is not None:
                ticket = self._ahead.take(nm)
        self._counts.append(tokens)
        self._tickets.append(ticket)
        self.paths.add(seq, parent, nm.kind)
        if nm.kind not in NOT_SENT:
            self._fresh.keep(seq, nm)
        self._next += 1
        self.messages += 1
        self.tool_calls += len(nm.tool_calls)
        if nm.role == "tool" and isinstance(nm.metadata, dict) and nm.metadata.get("is_error"):
            self.tool_errors += 1
        if nm.branch_type == "subagent" and nm.branch_id:
            self.subagents.add(nm.branch_id)
        if nm.branch_type is None:
            self._last_main = seq
        return seq

    def chain(self, messages: Iterable[NewMessage], parent: int | None) -> int | None:
        """Append messages one after another from ``parent``; returns the last sequence."""
        last = parent
        for nm in messages:
            last = self.add(nm, last)
        return last

    @property
    def next_sequence(self) -> int:
        return self._next

    def flush(self) -> None:
        """Write every queued message (waiting for counts being counted ahead)."""
        self._cut()
        while self._held:
            self._write_held()

    def _cut(self) -> None:
        """End the current chain and insert it: at once with pending token counts (filled
        in after the import commits: ``core/importers/counting.py:fill_pending``), or, when
        they are counted ahead, held until they are known (the chains before it first)."""
        if not self._pending:
            return
        chain = _Chain(
            self._pending,
            self._counts,
            self._tickets,
            self._pending_parent,
            self._next - len(self._pending),
        )
        self._pending, self._counts, self._tickets = [], [], []
        if self._ahead is None:
            self._write(chain)
            return
        self._held.append(chain)
        self._held_chars += chain.chars
        while self._held and (self._held_chars > self.HELD_CHARS or self._counted(self._held[0])):
            self._write_held()

    def _rendered_from_memory(self) -> bool:
        """Whether every held message a context may hold is among the ``FreshMessages``
        (which drop the oldest first, so checking the oldest sent one is enough)."""
        for chain in self._held:
            for n, nm in enumerate(chain.messages):
                if nm.kind not in NOT_SENT:
                    return chain.first + n in self._fresh
        return True

    def _counted(self, chain: _Chain) -> bool:
        ahead = self._ahead
        assert ahead is not None
        return all(ahead.ready(n) for n in chain.tickets if n is not None)

    def _write_held(self) -> None:
        chain = self._held.popleft()
        self._held_chars -= chain.chars
        ahead = self._ahead
        assert ahead is not None
        chain.counts = [
            c if n is None else ahead.count(n)
            for c, n in zip(chain.counts, chain.tickets, strict=True)
        ]
        self._write(chain)

    def _write(self, chain: _Chain) -> None:
        written = self.w.append_counted(
            self.trace_id,
            chain.messages,
            chain.counts,
            chain.parent,
            finite_json=self.json_from_reader and self.ctx.finite_json,
            undated_at=self.undated_at,
        )
        assert written == chain.first, "sequence prediction broke: trace written concurrently?"

    # -- records ----------------------------------------------------------------------
    def ref(
        self,
        kind: str,
        description: str,
        content: str | None,
        nbytes: int = 0,
        image_blocks: int = 0,
        source_sequence: int | None = None,
        metadata: Any = None,
    ) -> str:
        """Store content outside the context (an image, an attachment); returns its id."""
        self._refs += 1
        ref_id = f"{self.trace_id}-{kind}-{self._refs}"
        self.w.add_ref(
            ContextRef(
                id=ref_id,
                trace_id=self.trace_id,
                kind=kind,
                description=description,
                bytes=nbytes,
                image_blocks=image_blocks,
                source_sequence=source_sequence,
                content=content,
                metadata=metadata,
            )
        )
        return ref_id

    def _synced(self) -> None:
        """Make everything written so far visible to queries of this transaction."""
        self.flush()
        self.w.flush()

    def compaction(
        self,
        at_sequence: int | None,
        context_after: Sequence[ContextItem],
        *,
        trigger: str = "auto",
        summary_sequence: int | None = None,
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        details: Any = None,
        created_at: float = 0.0,
        level: str = "imported",
        before_at: int | None = None,
    ) -> CompactionEvent:
        """Record a boundary after ``at_sequence``: the model's context became ``context_after``.

        What left the context is the View up to ``before_at`` (default ``at_sequence``; a
        summary the boundary wrote on the path is after the context it replaced; from the
        in-memory tree,
        ``PathTracker``, which applies the View's rule: no query), the token figures are
        counted from the store, so they agree with what the inspector shows. A "tokens
        after" the source did not give is counted at ``finish`` unless the next call's
        recorded prompt settles it first (``_settle_after``: then it is never counted).
        """
        if tokens_before is None:
            self.flush()  # counted from the message rows (written, with their counts)
        else:
            self._cut()  # nothing is read: chains held for their counts may stay held
        r = self.w.read
        before: tuple[ContextItem, ...] = ()
        before_at = at_sequence if before_at is None else before_at
        if before_at is not None:
            before, _ = self.paths.items(before_at)
        after = tuple(context_after)
        kept = {i.sequence for i in after if i.sequence is not None and i.content is None}
        removed = tuple(
            i.sequence for i in before if i.sequence is not None and i.sequence not in kept
        )
        recorded = {"before": tokens_before is not None, "after": tokens_after is not None}
        if tokens_before is None:  # the source's figure wins; else count what the View held
            tokens_before, _ = token_breakdown(resolve(r, self.trace_id, before))
        count_after = tokens_after is None
        details = _with_recorded(details, recorded)
        event = self.w.record_compaction(
            CompactionEvent.between(
                self.trace_id,
                level,
                at_sequence,
                before,
                after,
                (tokens_before, 0 if tokens_after is None else tokens_after),
                removed=removed,
                trigger=trigger,
                summary_sequence=summary_sequence,
                details=details,
                created_at=created_at,
            )
        )
        self.paths.compaction(at_sequence, after)
        if count_after:
            self._count_after.add(len(self._boundaries))
        self._boundaries.append(event)
        self.compactions += 1
        return event

    def annotate_compaction(self, index: int, key: str, value: Any) -> None:
        """Add ``details[key]`` to the ``index``-th boundary of this import (a link learnt
        after it was recorded: the compaction run that wrote its summary)."""
        event = self._boundaries[index]
        details = {**(event.details if isinstance(event.details, dict) else {}), key: value}
        event = replace(event, details=details)
        self._boundaries[index] = event
        assert event.id is not None
        self.w.set_compaction_details(event.id, details)

    def _count_afters(self) -> None:
        """Count the "tokens after" of boundaries no call settled (what the View held)."""
        for n in sorted(self._count_after):
            event = self._boundaries[n]
            tokens, _ = token_breakdown(resolve(self.w.read, self.trace_id, event.context_after))
            assert event.id is not None
            self.w.set_compaction_after(event.id, tokens, event.details)
        self._count_after.clear()

    def _settle_after(self, boundary: int | None, usage: Any) -> None:
        """The first call that starts from an imported boundary recorded the prompt the
        compaction left: that is the boundary's recorded tokens after."""
        if boundary is None or boundary in self._settled:
            return
        self._settled.add(boundary)
        event = self._boundaries[boundary]
        norm = normalize_usage(usage)
        prompt = norm.get("prompt_tokens") if norm is not None else None
        recorded = as_recorded(event.details)
        if not isinstance(prompt, int) or recorded.get("after"):
            return
        details = _with_recorded(event.details, {**recorded, "after": True})
        if isinstance(details, dict):
            details["tokens_after_from"] = "the next call's recorded prompt tokens"
        assert event.id is not None
        self.w.set_compaction_after(event.id, prompt, details)
        self._count_after.discard(boundary)

    def llm_call(
        self,
        context: Sequence[ContextItem],
        *,
        model: str = "",
        head_sequence: int | None = None,
        response_sequence: int | None = None,
        usage: Any = None,
        latency_ms: float | None = None,
        error: str | None = None,
        agent_name: str = "main",
        branch_type: str | None = None,
        created_at: float = 0.0,
        params: Any = None,
        digest: str | None = None,
        encoded: list[Any] | None = None,
    ) -> LlmCall:
        """Record a model call the source logged, with the exact context it received
        (``digest``: its request hash when the caller already has it; ``encoded``: the
        context as ``encode_items`` gives it, likewise). Queued: written with
        the others at the next flush (``Writer.queue_llm_call``, one executemany); the request
        hash reads the context's messages (only their rows: ``ContextHashes``, which also
        carries the hash of an agent's growing context from call to call), so those queued
        here are written first; a given ``digest`` reads nothing."""
        if created_at:
            self.saw_time(created_at)
        items = tuple(context)
        if digest is None:
            self.flush()
            lane = f"call:{agent_name}"
            digest = self._context_hashes().digest(lane, items)
            encoded = self._context_hashes().encoded(lane) if encoded is None else encoded
        call = LlmCall(
            trace_id=self.trace_id,
            call_index=self.llm_calls,
            context=items,
            request_sha256=digest,
            model=model,
            head_sequence=head_sequence,
            response_sequence=response_sequence,
            usage=normalize_usage(usage) if usage is not None else None,
            latency_ms=latency_ms,
            error=error,
            agent_name=agent_name,
            branch_type=branch_type,
            created_at=created_at,
            params=params,
        )
        self.w.queue_llm_call(call, encoded)
        self.llm_calls += 1
        self.model = model or self.model
        return call

    def saw_time(self, when: float | None) -> None:
        """Count ``when``, a time the source recorded, into the trace's recorded span
        (``metadata.recorded_span``). Messages and calls count their own ``created_at``;
        an importer calls this for what those do not carry: when a span, an event or a
        bookkeeping record ended (an OTel span's end, the last hook record of a session),
        so the span runs from the first start to the last end of anything recorded."""
        if not when:
            return
        span = self._span
        if span is None:
            self._span = [when, when]
        elif when > span[1]:
            span[1] = when
        elif when < span[0]:
            span[0] = when

    def _record_times(self) -> None:
        """Keep the recorded start and end in the metadata (``recorded_span``; a trace the
        importer gave no date starts at its first recorded time, not at the import) and
        which messages have no recorded time (``undated``), in one update."""
        changes: dict[str, Any] = {}
        if self._span is None and self._created_at is not None and not self._span_known:
            self._span = [self._created_at, self._created_at]  # only the file's own date
        if self._span is not None and not self._span_known:  # (an eval's ``created``)
            start, end = self._span
            changes["recorded_span"] = {"start": start, "end": end}
            if not self._dated:
                self.w.set_created_at(self.trace_id, start)
        if self._undated:
            changes[KEY] = record(
                ((r[0], r[1]) for r in self._undated), self._filled_with, self.undated_at
            )
        if not changes:
            return
        meta = self.w.trace_metadata(self.trace_id)
        meta = dict(meta) if isinstance(meta, dict) else ({} if meta is None else {"value": meta})
        meta.update(changes)
        self.w.queue_trace_metadata(self.trace_id, meta)

    REPLY_CONTEXT_LIMIT = 2_000_000
    """Most path entries the rebuilt contexts of one trace's calls may hold together: each
    call stores its item list, so a very long unbroken session would store a quadratic
    amount (a 24 MB synthetic session: ~10^8 entries). Beyond it no reply is recorded as a
    call and the playback derives the calls from the assistant messages, as before."""

    def reply_calls(self, replies: Sequence[PendingReply]) -> list[LlmCall]:
        """Each reply as a call (``reply_call``), in order, if the contexts of every reply
        given so far fit together (else a warning and none from then on: a live capture
        gives its replies a few at a time). Returns the calls, one per reply, or none."""
        if self._replies_dropped:
            return []
        self._replies[0] += len(replies)
        self._replies[1] += sum(self.context_entries(r[0]) for r in replies)
        if not self.calls_fit(*self._replies):
            self._replies_dropped = True
            return []
        return [
            self.reply_call(head, reply, usage=usage, model=model, created_at=when)
            for head, reply, usage, model, when in replies
        ]

    def set_call_usage(self, call_index: int, usage: Any) -> None:
        """Replace the usage of a call this trace recorded (a live capture's: ``Writer.
        set_call_usage``)."""
        self.w.set_call_usage(self.trace_id, call_index, normalize_usage(usage))

    def set_call_response(self, call_index: int, sequence: int, created_at: float) -> None:
        """Link a call this trace recorded to its response (``Writer.set_call_response``)."""
        self.w.set_call_response(self.trace_id, call_index, sequence, created_at)

    def context_entries(self, head: int | None) -> int:
        """Path entries of the rebuilt context of a call at ``head`` (``reply_calls``' sum)."""
        return 0 if head is None else self.paths.depth[head] + 1

    def calls_fit(self, calls: int, entries: int) -> bool:
        """``reply_calls``' test from running totals (an importer that stops keeping its replies
        once they cannot fit, so memory stays constant in the file size)."""
        if entries <= self.REPLY_CONTEXT_LIMIT:
            return True
        self.ctx.warn(
            f"{self.path}: {calls} model calls not stored as calls (their contexts would "
            f"hold {entries:,} entries); the playback derives them from the replies"
        )
        return False

    def reply_call(
        self,
        head: int | None,
        response_sequence: int | None,
        *,
        usage: Any,
        model: str = "",
        agent_name: str = "main",
        branch_type: str | None = None,
        since: int | None = None,
        created_at: float = 0.0,
        lane: str | None = None,
    ) -> LlmCall:
        """A model call the source logged only as its reply and usage: the context is what
        the View holds at ``head`` (``params.context = "reconstructed"``); ``since`` cuts it
        to what follows that message (a subagent sees its own branch, not its parent's).
        The hash reads only message rows, so queued messages are written, not the rest
        (a ``Writer.flush`` per call would also write the call queue one call at a time).
        Chains held for their counts need not be written: the hash renders them from memory
        (``_rendered_from_memory``), so the calls go on while the counting does."""
        self._cut()
        if not self._rendered_from_memory():
            self.flush()
        items: tuple[ContextItem, ...] = ()
        if head is not None:
            items, boundary = self.paths.items(head)
            if branch_type is None:
                self._settle_after(boundary, usage)
        if since is not None:
            cut = next((n for n, i in enumerate(items) if i.sequence == since), None)
            items = items[cut + 1 :] if cut is not None else items
        key = lane or agent_name
        digest = self._context_hashes().digest(key, items)
        return self.llm_call(
            items,
            model=model,
            head_sequence=head,
            response_sequence=response_sequence,
            usage=usage,
            agent_name=agent_name,
            branch_type=branch_type,
            created_at=created_at,
            params={"context": "reconstructed"},
            digest=digest,
            encoded=self._context_hashes().encoded(key),
        )

    def _context_hashes(self) -> ContextHashes:
        """The hash state of this trace's calls; it reads through the current transaction
        (a live builder writes each batch in a transaction of its own)."""
        if self._hashes is None:
            self._hashes = ContextHashes(self.w.read, self.trace_id, self.paths.sent, self._fresh)
        self._hashes.reader = self.w.read
        return self._hashes

    def first_text(self, role: str = "user", kind: str = "message") -> str:
        """The first real request among the first messages with this role and kind (a
        title candidate: ``core/importers/titles.py:request_title``)."""
        from sqlalchemy import select

        from core.store import schema as t

        self.flush()
        m = t.messages.c
        rows = self.w.conn.execute(
            select(m.content)
            .where(m.trace_id == self.trace_id, m.role == role, m.kind == kind, m.content != "")
            .order_by(m.sequence)
            .limit(20)
        )
        return next((title for (text,) in rows if (title := request_title(str(text)))), "")

    def set_metadata(self, key: str, value: Any) -> None:
        """Add one key to the trace's metadata (a window, a limit the tool recorded), to
        the metadata as this transaction has it: the keys ``finish`` writes straight to the
        store (``recorded_span``, ``undated``) stay when a live capture adds one later."""
        stored = self.w.trace_metadata(self.trace_id)
        meta = dict(stored) if isinstance(stored, dict) else {}
        meta[key] = value
        self.metadata = meta
        self.w.update_trace_metadata(self.trace_id, meta)

    def set_title(self, title: str) -> None:
        if title and title != self.title:
            self.title = title
            self.w.set_title(self.trace_id, title)

    def _mark_naive_times(self) -> None:
        """Times without a zone were read as UTC: the trace says so (``time_basis``,
        ``core/importers/times.py:UNKNOWN_ZONE``) unless its importer recorded how it read
        them (an offset it found, ``core/importers/times.py:SourceClock.basis``)."""
        if naive_times_read() <= self._naive_from:
            return
        if isinstance(self.metadata, dict) and "time_basis" in self.metadata:
            return
        self.set_metadata("time_basis", dict(UNKNOWN_ZONE))

    def finish(self, head: int | None = None) -> ImportResult:
        """Set the head (default: the last main-line message) and report what was written."""
        self.flush()
        self._count_afters()
        self.w.flush_calls()
        has_model = isinstance(self.metadata, dict) and self.metadata.get("model")
        if self.model and not has_model:
            self.set_metadata("model", self.model)
        if self.tool_errors:  # what ``has:error`` finds (a live capture adds to its count)
            before = self.w.trace_metadata(self.trace_id)
            known = before.get("tool_errors", 0) if isinstance(before, dict) else 0
            self.set_metadata("tool_errors", int(known or 0) + self.tool_errors)
            self.tool_errors = 0
        self._mark_naive_times()
        self.ctx.flush_notes()
        target = head if head is not None else self._last_main
        if target is None and self._next:
            target = self._next - 1
        self.w.set_head(self.trace_id, target)
        self._record_times()
        if self._ahead is not None:
            self._ahead.complete.add(self.trace_id)  # every row was written counted
        return ImportResult(
            path=self.path,
            format=self.format,
            trace_id=self.trace_id,
            messages=self.messages,
            tool_calls=self.tool_calls,
            compactions=self.compactions,
            subagents=len(self.subagents),
            warnings=tuple(self.ctx.warnings[self._warnings_from :]),
            llm_calls=self.llm_calls,
        )


def as_recorded(details: Any) -> dict[str, bool]:
    """Which of a boundary's token figures the source recorded (the rest are counts)."""
    rec = details.get("tokens_recorded") if isinstance(details, dict) else None
    return dict(rec) if isinstance(rec, dict) else {}


def _with_recorded(details: Any, recorded: dict[str, bool]) -> Any:
    if details is None:
        return {"tokens_recorded": recorded}
    if isinstance(details, dict):
        return {**details, "tokens_recorded": recorded}
    return details
