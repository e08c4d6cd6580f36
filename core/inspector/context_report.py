"""What the model received at a call (or will receive next), as rows with token parts.

The report streams the context item by item, so the "next call" of a million-message
trace costs bounded memory: it lists the first and last ``keep // 2`` items, counts the
rest, and sums tokens by UI-4 component over all of them (the parts always sum to the
total). For a context that fits in ``keep`` it also recomputes ``request_sha256`` so the
UI can show that the list matches what was recorded for the call.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.context.budget import Budget, budget_of
from core.context.view import (
    COMPONENTS,
    Entry,
    View,
    component_of,
    entry_of,
    render_item,
    request_sha256,
    tokens_of,
)
from core.inspector.call_numbers import CallNumbering, recorded_numbering
from core.inspector.images import ImageEstimate, image_estimate, image_parts
from core.inspector.membership import iter_current, resolve_items
from core.inspector.prompt import PromptMeasure, prompt_measure
from core.inspector.recorded import (
    CarriedGap,
    GapContext,
    GapWords,
    Recorded,
    gap_context,
    gap_words,
    recorded_of,
)
from core.inspector.timeline import preview_of
from core.proxy.query import proxied_digest
from core.records import ContextItem, LlmCall, Message
from core.replay.context_origin import ContextOrigin, context_origin
from core.store.reader import Reader
from core.tokens.image_tokens import provider_of

KEEP = 4000


class Cancelled(Exception):
    """Raised inside a report when its cancel event is set."""


@dataclass(frozen=True, slots=True)
class ReportRow:
    index: int
    sequence: int | None
    role: str
    kind: str
    component: str
    tokens: int
    preview: str
    overridden: bool
    """The item shows other content than the stored message (marker, placeholder)."""


@dataclass(frozen=True)
class ContextReport:
    label: str
    call_index: int | None
    rows: tuple[ReportRow, ...]
    elided: int
    """Items counted but not listed (between the first and last halves of ``rows``)."""
    items: int
    total: int
    by_component: dict[str, int]
    budget: Budget
    request_sha256: str | None = None
    recorded_sha256: str | None = None
    model: str | None = None
    usage: Any = None
    boundary_text: str | None = None
    sequences: frozenset[int] = field(default_factory=frozenset)
    """Listed message sequences (for selecting them in the timeline)."""
    recorded: Recorded | None = None
    """The tokens the tool recorded for this call (``None``: not a call, or none recorded)."""
    origin: ContextOrigin | None = None
    """Where a call's context comes from (``core/replay/context_origin.py:context_origin``,
    the playback strip's words too); ``None``: the next call's (the current View)."""
    carried: CarriedGap | None = None
    """The next call of an import: the gap measured at its last call that recorded a prompt."""
    images: ImageEstimate | None = None
    """The context's image blocks and their estimated tokens (``None``: no image)."""
    gap_context: GapContext | None = None
    """What the context the gap was measured at holds (this call's, or for the next call
    the carried gap's call): what ``not in the transcript`` can be (``gap``)."""

    @property
    def reconstructed(self) -> bool:
        """The call's context was rebuilt from the transcript (the tool did not log it)."""
        return self.origin is not None and not self.origin.recorded

    @property
    def image_tokens(self) -> int:
        """Estimated tokens of the images (0 without images or without an estimate)."""
        return self.images.estimated_tokens if self.images is not None else 0

    @property
    def unexplained(self) -> int | None:
        """Recorded prompt tokens minus the listed context's text and estimated images: what
        was not in the transcript (for the next call of an import, as measured at its last
        recorded call)."""
        if self.recorded is not None:
            return self.recorded.unexplained(self.total + self.image_tokens)
        return self.carried.tokens if self.carried is not None else None

    @property
    def measure(self) -> PromptMeasure:
        """The prompt this context stands for and how it is known
        (``core/inspector/prompt.py:prompt_measure``)."""
        recorded = self.recorded.prompt_tokens if self.recorded is not None else None
        carried = (
            self.carried.tokens if self.carried is not None and self.recorded is None else None
        )
        return prompt_measure(self.by_component, self.image_tokens, recorded, carried)

    @property
    def gap(self) -> GapWords | None:
        """The ``not in the transcript`` part in words (``None``: there is none)."""
        tokens = self.unexplained
        if tokens is None or tokens <= 0:
            return None
        return gap_words(tokens, self.gap_context, self.images.unknown if self.images else 0)

    @property
    def gap_text(self) -> str:
        """The label after the gap's number: "not in the transcript (…)" naming only what
        this context can lack."""
        gap = self.gap
        if gap is not None:
            return gap.text
        return gap_words(0, self.gap_context, self.images.unknown if self.images else 0).text

    @property
    def parts(self) -> dict[str, int]:
        """The token parts to draw: the counted components, ``images (estimated)`` and
        ``not in the transcript`` when there are such parts."""
        return self.measure.parts

    @property
    def prompt_tokens(self) -> int:
        """The prompt this context stands for: the parts' sum (the recorded prompt where it
        is larger than the transcript's count), what free space and limits are measured by."""
        return self.measure.tokens

    @property
    def prompt_estimated(self) -> bool:
        """``prompt_tokens`` is an estimate (the next call of an import; images' estimate
        without a record covering them): shown with "≈"."""
        return self.measure.estimated

    @property
    def matches_record(self) -> bool | None:
        if self.request_sha256 is None or self.recorded_sha256 is None:
            return None
        return self.request_sha256 == self.recorded_sha256


def item_tokens(item: ContextItem, msg: Message | None) -> tuple[str, int]:
    """``(component, tokens)`` of one item, exactly as ``token_breakdown`` counts it."""
    return component_of(item, msg), tokens_of(item, msg)


def build_report(
    pairs: Iterable[tuple[ContextItem, Message | None]],
    *,
    label: str,
    keep: int = KEEP,
    cancel: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
    images: list[Message] | None = None,
) -> tuple[list[ReportRow], int, int, dict[str, int], str | None]:
    """Rows, elided, items, tokens by component and request hash of a context; ``images``
    collects the messages shown as stored that hold image parts."""
    half = max(1, keep // 2)
    head: list[ReportRow] = []
    tail: deque[ReportRow] = deque(maxlen=half)
    rendered: list[dict[str, Any]] | None = []
    by = dict.fromkeys(COMPONENTS, 0)
    n = 0
    for n, (item, msg) in enumerate(pairs, start=1):
        if cancel is not None and n % 1000 == 0:
            if cancel.is_set():
                raise Cancelled(label)
            if progress is not None:
                progress(n)
        row = _row(n - 1, item, msg)
        by[row.component] += row.tokens
        if images is not None and msg is not None and item.content is None and image_parts(msg):
            images.append(msg)
        if len(head) < half:
            head.append(row)
        else:
            tail.append(row)
        if rendered is not None:
            if n > keep:
                rendered = None
            else:
                rendered.append(_render(item, msg))
    rows = head + list(tail)
    digest = request_sha256(rendered) if rendered is not None else None
    return rows, n - len(rows), n, by, digest


def _row(index: int, item: ContextItem, msg: Message | None) -> ReportRow:
    return report_row(index, entry_of(item, {msg.sequence: msg} if msg is not None else {}))


def report_row(index: int, entry: Entry) -> ReportRow:
    """One row of the context view (the report and the replay diff show the same rows)."""
    item, msg = entry.item, entry.message
    if item.content is not None:
        preview = " ".join(item.content[:320].split())[:160]
    else:
        preview = preview_of(msg) if msg is not None else ""
    return ReportRow(
        index,
        item.sequence,
        entry.role,
        entry.kind,
        entry.component,
        entry.tokens,
        preview,
        item.content is not None,
    )


def _render(item: ContextItem, msg: Message | None) -> dict[str, Any]:
    msgs = {item.sequence: msg} if msg is not None and item.sequence is not None else {}
    return render_item(item, msgs)


def current_report(
    reader: Reader,
    trace_id: str,
    head: int | None = None,
    *,
    keep: int = KEEP,
    cancel: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> ContextReport:
    """The context the next call would receive (the current View)."""
    from core.inspector.bands import band_text
    from core.inspector.membership import context_membership

    trace = reader.trace(trace_id)
    budget = budget_of(trace.source, trace.metadata)
    if head is not None:  # a head rewound before the tool's own compaction
        budget = budget_at(reader, trace_id, budget, head)
    member = context_membership(reader, trace_id, head)
    label = "next call (current context)"
    if trace.source == "proxy":  # the agent, not ctxlens, decides what it sends next
        label = "every recorded message (a proxied agent's next context is its own choice)"
    pictured: list[Message] = []
    rows, elided, n, by, digest = build_report(
        iter_current(reader, trace_id, head),
        label=label,
        keep=keep,
        cancel=cancel,
        progress=progress,
        images=pictured,
    )
    carried = carried_gap(reader, trace_id) if budget.source == "imported" else None
    return ContextReport(
        label,
        None,
        tuple(rows),
        elided,
        n,
        sum(by.values()),
        by,
        budget,
        request_sha256=digest,
        boundary_text=band_text(member.boundary) if member.boundary else None,
        sequences=_seqs(rows),
        carried=carried,
        images=image_estimate(reader, trace_id, pictured, trace_provider(reader, trace_id, carried))
        if pictured
        else None,
        gap_context=carried.where() if carried is not None else None,
    )


def view_images(
    reader: Reader, trace_id: str, view: View, call: LlmCall | None, carried: CarriedGap | None
) -> ImageEstimate | None:
    """The images of a resolved context (``ctxlens context``): at ``call``, by its model's
    rule; the next call (``call`` ``None``), by the rule of the trace's last call."""
    pictured = [
        e.message
        for e in view.entries
        if e.message is not None and e.item.content is None and image_parts(e.message)
    ]
    if not pictured:
        return None
    if call is not None:
        provider = provider_of(call.model, reader.trace(trace_id).source)
    else:
        provider = trace_provider(reader, trace_id, carried)
    return image_estimate(reader, trace_id, pictured, provider)


def current_images(
    reader: Reader, trace_id: str, carried: CarriedGap | None = None
) -> ImageEstimate | None:
    """The images of the current context (what the next call sends) and their estimate by
    the rule of the trace's model (``trace_provider``); ``None`` when it holds none."""
    pictured = [
        msg
        for item, msg in iter_current(reader, trace_id)
        if msg is not None and item.content is None and image_parts(msg)
    ]
    if not pictured:
        return None
    return image_estimate(reader, trace_id, pictured, trace_provider(reader, trace_id, carried))


def trace_provider(reader: Reader, trace_id: str, carried: CarriedGap | None = None) -> str | None:
    """Whose image rule the next call follows: the model of the call the gap was measured at
    (else the trace's last call), else the tool that wrote the trace."""
    calls = reader.llm_calls(trace_id) if carried is None else []
    model = None
    if carried is not None:
        model = reader.llm_call(trace_id, carried.call_index).model
    elif calls:
        model = calls[-1].model
    return provider_of(model, reader.trace(trace_id).source)


def carried_gap(reader: Reader, trace_id: str) -> CarriedGap | None:
    """``CarriedGap`` at the current path's last main-agent call, when it recorded its
    prompt tokens and its context (``None`` otherwise: nothing is guessed)."""
    numbering = recorded_numbering(reader, trace_id)  # only a recorded call has a prompt
    main = numbering.current_main()
    ref = numbering.calls[main[-1]].call if main else None
    if ref is None or ref.call_index is None:
        return None
    call = reader.llm_call(trace_id, ref.call_index)
    rec = recorded_of(call.usage)
    if rec is None or rec.prompt_tokens is None or call.context is None:
        return None
    counted, pictured, items, system = 0, [], 0, 0
    for item, msg in resolve_items(reader, trace_id, call.context):
        component, tokens = item_tokens(item, msg)
        counted += tokens
        items += 1
        system += tokens if component == "system" else 0
        if msg is not None and item.content is None and image_parts(msg):
            pictured.append(msg)
    provider = provider_of(call.model, reader.trace(trace_id).source)
    est = image_estimate(reader, trace_id, pictured, provider)
    images = est.estimated_tokens if est is not None else 0
    where = gap_context(items, {"system": system}, call.params)
    return CarriedGap(
        rec.prompt_tokens - counted - images,
        ref.call_index,
        rec.prompt_tokens,
        counted,
        images,
        where.items,
        where.system_in_context,
        where.tool_definitions,
    )


def budget_at(reader: Reader, trace_id: str, budget: Budget, head: int | None) -> Budget:
    """``budget`` as of the step whose head is ``head`` (``Budget.as_of``): an imported
    tool's auto-compact point "fired later, at" a step before its first compaction of its
    own (a boundary with trigger ``auto`` on the step's path, at or before its head)."""
    if budget.auto_compact is None or head is None:
        return budget
    autos = [
        c.at_sequence
        for c in reader.compactions(trace_id)
        if c.trigger == "auto" and c.at_sequence is not None and c.at_sequence <= head
    ]
    segments = reader.segments(trace_id, head) if autos else []
    return budget.as_of(any(reader.is_on_path(trace_id, s, segments) for s in autos))


def call_report(
    reader: Reader,
    call: LlmCall,
    *,
    keep: int = KEEP,
    cancel: threading.Event | None = None,
    label: str | None = None,
) -> ContextReport:
    """Exactly the item list recorded for an LLM call; ``label``: its name in the trace's
    call numbering (``CallNumbering.name``)."""
    trace = reader.trace(call.trace_id)
    budget = budget_at(
        reader, call.trace_id, budget_of(trace.source, trace.metadata), call.head_sequence
    )
    label = label or f"call {call.call_index}"
    pictured: list[Message] = []
    rows, elided, n, by, digest = build_report(
        resolve_items(reader, call.trace_id, call.context),
        label=label,
        keep=keep,
        cancel=cancel,
        images=pictured,
    )
    return ContextReport(
        label,
        call.call_index,
        tuple(rows),
        elided,
        n,
        sum(by.values()),
        by,
        budget,
        request_sha256=proxied_digest(reader, call) or digest,
        recorded_sha256=call.request_sha256,
        model=call.model,
        usage=call.usage,
        sequences=_seqs(rows),
        recorded=recorded_of(call.usage),
        origin=context_origin(trace.source, trace.metadata, call.params),
        images=image_estimate(
            reader, call.trace_id, pictured, provider_of(call.model, trace.source)
        ),
        gap_context=gap_context(n, by, call.params),
    )


def _seqs(rows: list[ReportRow]) -> frozenset[int]:
    return frozenset(r.sequence for r in rows if r.sequence is not None)


# -- diff between two contexts -------------------------------------------------------------
@dataclass(frozen=True)
class ContextDiff:
    """What entered and what left between two contexts (by item identity)."""

    before_label: str
    after_label: str
    entered: tuple[ReportRow, ...]
    left: tuple[ReportRow, ...]
    kept: int
    tokens_entered: int
    tokens_left: int


def _key(item: ContextItem) -> tuple[Any, ...]:
    return (item.sequence, item.content, item.role, item.kind)


def diff_items(
    before: Iterable[ContextItem], after: Iterable[ContextItem]
) -> tuple[list[ContextItem], list[ContextItem], int]:
    """``(entered, left, kept)``; an item whose content override changed counts as one
    that left and one that entered. Duplicates are matched as a multiset."""
    from collections import Counter

    b = list(before)
    a = list(after)
    remaining = Counter(_key(i) for i in b)
    entered: list[ContextItem] = []
    for item in a:
        k = _key(item)
        if remaining[k] > 0:
            remaining[k] -= 1
        else:
            entered.append(item)
    left_keys = remaining
    left: list[ContextItem] = []
    for item in b:
        k = _key(item)
        if left_keys[k] > 0:
            left_keys[k] -= 1
            left.append(item)
    return entered, left, len(a) - len(entered)


def diff_report(
    reader: Reader,
    trace_id: str,
    before: tuple[ContextItem, ...],
    after: tuple[ContextItem, ...],
    before_label: str,
    after_label: str,
) -> ContextDiff:
    entered, left, kept = diff_items(before, after)
    e_rows = [_row(i, it, m) for i, (it, m) in enumerate(resolve_items(reader, trace_id, entered))]
    l_rows = [_row(i, it, m) for i, (it, m) in enumerate(resolve_items(reader, trace_id, left))]
    return ContextDiff(
        before_label,
        after_label,
        tuple(e_rows),
        tuple(l_rows),
        kept,
        sum(r.tokens for r in e_rows),
        sum(r.tokens for r in l_rows),
    )


def call_diff(
    reader: Reader, trace_id: str, call_index: int, numbering: CallNumbering | None = None
) -> ContextDiff | None:
    """Diff between a call and the next call of its kind (the current path's next call, or
    the next one on the abandoned branch); the current path's last call is compared with
    the next call (the current context)."""
    numbering = numbering or recorded_numbering(reader, trace_id)
    n = numbering.by_index(call_index)
    if n is None or n.call.context is None:
        return None
    before, name = n.call.context, numbering.short(n.call.position)
    after = numbering.next_of(n.call.position)
    if after is not None and after.call.context is not None:
        after_name = numbering.short(after.call.position)
        return diff_report(reader, trace_id, before, after.call.context, name, after_name)
    if n.abandoned or n is not numbering.last_current():  # the next call is the main agent's
        return None
    return diff_report(reader, trace_id, before, _view_items(reader, trace_id), name, "next call")


def head_diff(
    reader: Reader,
    trace_id: str,
    head: int,
    label: str,
    following: tuple[int, str] | None,
) -> ContextDiff:
    """Diff between the View at ``head`` (a call a trace did not record: the playback
    derives it from a reply) and the View at the next such call's head, ``following``
    (its head and name), or the next call (the current context) after the last one."""
    after_head, after_label = following if following is not None else (None, "next call")
    before, after = _view_items(reader, trace_id, head), _view_items(reader, trace_id, after_head)
    return diff_report(reader, trace_id, before, after, label, after_label)


def _view_items(reader: Reader, trace_id: str, head: int | None = None) -> tuple[ContextItem, ...]:
    """The View's items at ``head`` (else the current context), at most 50,000 of them."""
    return tuple(item for item, _ in _bounded(iter_current(reader, trace_id, head), 50_000))


def numbered_call_report(
    reader: Reader, trace_id: str, call_index: int, *, cancel: threading.Event | None = None
) -> tuple[ContextReport, ContextDiff | None]:
    """A recorded call's report and its diff, named by the trace's call numbering (the
    scrubber's "call 41 of 0–126", or "a call abandoned by a rewind")."""
    numbering = recorded_numbering(reader, trace_id)
    n = numbering.by_index(call_index)
    label = None if n is None else numbering.titled(n.call.position)
    report = call_report(reader, reader.llm_call(trace_id, call_index), cancel=cancel, label=label)
    return report, call_diff(reader, trace_id, call_index, numbering)


def last_call_diff(reader: Reader, trace_id: str) -> ContextDiff | None:
    """The current path's last call against the next call (not a call a rewind left)."""
    numbering = recorded_numbering(reader, trace_id)
    last = numbering.last_current()
    if last is None or last.call.call_index is None:
        return None
    return call_diff(reader, trace_id, last.call.call_index, numbering)


def _bounded(
    pairs: Iterator[tuple[ContextItem, Message | None]], limit: int
) -> Iterator[tuple[ContextItem, Message | None]]:
    for n, pair in enumerate(pairs):
        if n >= limit:
            return
        yield pair
