"""Inspect AI evaluation logs: ``.eval`` (zip) and ``.json``, current and older releases.

Each sample becomes one trace: its ``messages`` are the conversation; ``model`` events
become LLM calls whose context maps every input message onto a stored message (messages
the state no longer holds, such as a summary a compaction inserted, are kept as
synthetic context items); ``compaction`` events become compaction boundaries whose context
is what the next model call received. ``attachment://`` (and older ``tc://``) references
are resolved from the sample's attachments; images become refs.

Memory: one sample at a time. A ``.json`` log streams its ``samples`` array item by item;
a ``.eval`` reads one zip member at a time, refusing members whose declared size or
compression ratio looks like a zip bomb.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections import deque
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError
from core.importers.base import ImportContext, ImportResult, ImportUnit, TraceBuilder
from core.importers.content import as_dict, as_list, dumps, image_ref, parse_time, scrub, text_of
from core.importers.inspect_eval import eval_summary, has_content, sample_summary, sample_title
from core.importers.jsonstream import TOO_DEEP, BeyondLimits, JsonDocument
from core.importers.reading import CountingReader, loads
from core.importers.zipmembers import member_chunks
from core.records import ROLES, ContextItem, NewMessage, ToolCall
from core.store.writer import Writer

FORMAT = "inspect"
#: Largest zip member read (uncompressed bytes) and the ratio above which it is a bomb.
MAX_MEMBER = 512 << 20
MAX_RATIO = 200
MAX_MEMBERS = 100_000
REF_PREFIXES = ("attachment://", "tc://")


# -- reading ----------------------------------------------------------------------------
def _eval_samples(
    path: Path, ctx: ImportContext
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(where, header, sample)`` for every sample of a ``.eval`` zip."""
    try:
        z = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InvalidInputError(f"{path}: not a readable .eval (zip) file: {exc}") from None
    with z:
        infos = z.infolist()
        if len(infos) > MAX_MEMBERS:
            raise InvalidInputError(f"{path}: {len(infos)} zip members; refusing (zip bomb?)")
        by_name = {i.filename: i for i in infos}
        header = (
            _member_json(z, path, by_name["header.json"], ctx) if "header.json" in by_name else {}
        )
        if not header and "_journal/start.json" in by_name:
            header = _member_json(z, path, by_name["_journal/start.json"], ctx)
        samples = sorted((i for i in infos if i.filename.startswith("samples/")), key=_sample_order)
        for info in samples:
            value = _member_json(z, path, info, ctx)
            yield f"{path}!{info.filename}", header, as_dict(value)


def _sample_order(info: zipfile.ZipInfo) -> tuple[Any, ...]:
    stem = info.filename.removeprefix("samples/").removesuffix(".json")
    sid, _, epoch = stem.rpartition("_epoch_")
    return (int(epoch) if epoch.isdigit() else 0, int(sid) if sid.isdigit() else 0, sid)


def _member_json(z: zipfile.ZipFile, path: Path, info: zipfile.ZipInfo, ctx: ImportContext) -> Any:
    where = f"{path}!{info.filename}"
    if info.file_size > MAX_MEMBER:
        raise InvalidInputError(
            f"{where}: member is {info.file_size >> 20} MB uncompressed; refusing (zip bomb?)"
        )
    if info.file_size > (1 << 20) and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise InvalidInputError(
            f"{where}: compression ratio {info.file_size // max(info.compress_size, 1)}:1; "
            "refusing (zip bomb?)"
        )
    data = b"".join(member_chunks(z, info, where, MAX_MEMBER))
    ctx.advance(info.compress_size)
    try:
        return loads(data)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise InvalidInputError(
            f"{where}{f':{line}' if line else ''}: invalid JSON: {exc}"
        ) from None
    except RecursionError:  # named here: the import's own ``where`` is the sample before
        raise BeyondLimits(f"{where}: {TOO_DEEP}") from None


def _json_samples(
    path: Path, ctx: ImportContext
) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    with path.open("rb") as raw:
        doc = JsonDocument(CountingReader(raw, ctx), str(path))
        if doc.begin() != "{":
            raise InvalidInputError(f"{path}: an Inspect log is a JSON object")
        header: dict[str, Any] = {}
        for key in doc.members():
            if key == "samples" and doc.enter_array():
                for i, sample in enumerate(doc.items()):
                    yield f"{path}: samples[{i}]", header, as_dict(sample)
            else:
                header[key] = doc.value()
        doc.end()


# -- one sample -------------------------------------------------------------------------
class _Sample:
    def __init__(
        self, b: TraceBuilder, ctx: ImportContext, where: str, refs: dict[str, Any]
    ) -> None:
        self.b = b
        self.ctx = ctx
        self.where = where
        self.refs = refs
        self.tail: int | None = None
        self.by_key: dict[str, list[int]] = {}
        self.open_calls: dict[str, str] = {}
        self.pending_compaction: dict[str, Any] | None = None
        self.anchor: int | None = None
        self.outputs: dict[int, tuple[dict[str, Any], tuple[NewMessage, str] | None]] = {}
        """Each model event's output (references resolved) and its message with the
        message's key, by event index (``read_times``)."""
        self.answered: dict[str, deque[float]] = {}
        """Key of a model event's output -> the times of the events that returned it."""
        self.tool_times: dict[str, float] = {}
        """Tool call id -> when its tool event recorded the result."""
        self.input_time: float | None = None
        """When the sample started with its input (``started_at``, else ``sample_init``)."""
        self.key = ""
        """The key of the message ``message(keep=True)`` made last (``add`` indexes it)."""

    def read_times(self, sample: dict[str, Any], events: list[Any]) -> None:
        """The times the log records for its messages, before they are written: the model
        event that returned an assistant message (``completed``, else ``timestamp``), the
        tool event of a tool result, the sample's start for its input (``source: input``).
        Each model event's output is read here once (``outputs``), for ``model_event``."""
        start = parse_time(sample.get("started_at"))
        for j, e in enumerate(events):
            if not isinstance(e, dict):
                continue
            kind = e.get("event")
            if kind == "model":
                self.outputs[j] = out = self._output(e, f"{self.where}.events[{j}]")
                reply = out[1]
                when = _event_time(e)
                if reply is not None and when:
                    self.answered.setdefault(reply[1], deque()).append(when)
            elif kind == "tool":
                when = _event_time(e)
                if when and e.get("id"):
                    self.tool_times.setdefault(str(e["id"]), when)
            elif kind == "sample_init" and start is None:
                start = parse_time(e.get("timestamp"))
        self.input_time = start

    def _output(
        self, ev: dict[str, Any], where: str
    ) -> tuple[dict[str, Any], tuple[NewMessage, str] | None]:
        """A model event's output, and its message with that message's key."""
        output = as_dict(self.resolve(ev.get("output")))
        choice = as_dict((as_list(output.get("choices")) or [{}])[0])
        reply = choice.get("message")
        if not isinstance(reply, dict):
            return output, None
        nm = self.message(reply, f"{where}.output", keep=False)
        return output, (nm, _key(nm.role, nm.content, nm.tool_call_id))

    def _time_of(self, m: dict[str, Any], role: str, key: str, call_id: str | None) -> float | None:
        """The recorded time of a message of the sample (``read_times``), else ``None``."""
        if m.get("source") == "input":
            return self.input_time
        if role == "assistant":
            times = self.answered.get(key)
            return times.popleft() if times else None
        if role == "tool" and call_id:
            return self.tool_times.get(call_id)
        return None

    def resolve(self, value: Any) -> Any:
        return _resolve(value, self.refs)

    def message(self, m: Any, where: str, keep: bool = True) -> NewMessage:
        """A stored message for ``m``; with ``keep=False`` only its text and role (for
        matching model inputs: no refs are written, no calls are opened)."""
        m = self.resolve(as_dict(m))
        role = m.get("role")
        if role not in ROLES:
            raise InvalidInputError(f"{where}: unknown message role {role!r}")
        text, parts = self._content(m.get("content"), where, keep)
        calls: list[ToolCall] = []
        for c in as_list(m.get("tool_calls")):
            c = as_dict(c)
            fn = c.get("function")
            name = fn.get("name") if isinstance(fn, dict) else fn
            args = (
                (fn.get("arguments") if isinstance(fn, dict) else None) or c.get("arguments") or {}
            )
            call = ToolCall(str(c.get("id") or ""), str(name or ""), dumps(args))
            calls.append(call)
            if keep:
                self.open_calls[call.id] = call.name
        meta: dict[str, Any] = {k: m[k] for k in ("source", "id", "model") if m.get(k)}
        call_id = None
        name = None
        if role == "tool":
            call_id = str(m.get("tool_call_id") or "") or None
            name = str(m.get("function") or "") or None
            if m.get("error"):
                meta["error"] = m["error"]
                meta["is_error"] = True
            if keep and call_id not in self.open_calls:
                self.ctx.note("tool result without a matching tool call", where)
        when = None
        if keep:
            self.key = _key(role, text, call_id)
            when = self._time_of(m, role, self.key, call_id)
        return NewMessage(
            role,
            text,
            parts=parts,
            tool_calls=tuple(calls),
            tool_call_id=call_id,
            name=name,
            created_at=when,
            metadata=meta or None,
        )

    def _content(self, value: Any, where: str, keep: bool) -> tuple[str, tuple[Any, ...] | None]:
        if not isinstance(value, list):
            return text_of(value), None
        parts: list[Any] = []
        special = False
        texts: list[str] = []
        for block in value:
            d = as_dict(block)
            kind = d.get("type")
            if kind == "text":
                texts.append(str(d.get("text") or ""))
                parts.append(d)
            elif kind == "image":
                if keep:
                    image = str(d.get("image") or "")
                    parts.append(image_ref(self.b, image, "", where, self.b.next_sequence))
                special = True
            elif kind == "reasoning":
                parts.append(
                    {
                        "type": "thinking",
                        "thinking": str(d.get("reasoning") or ""),
                        "redacted": bool(d.get("redacted")),
                    }
                )
                special = True
            else:
                parts.append(d)
                special = True
        return "\n".join(t for t in texts if t), tuple(parts) if special else None

    def add(self, nm: NewMessage) -> int:
        """Add ``nm``, which ``message(keep=True)`` made last (its key is ``self.key``)."""
        self.tail = self.b.add(nm, self.tail)
        self.by_key.setdefault(self.key, []).append(self.tail)
        return self.tail

    def items(self, messages: list[Any], where: str) -> list[ContextItem]:
        """A model input as context items: stored messages where they match, else synthetic."""
        out: list[ContextItem] = []
        last = -1
        for i, m in enumerate(messages):
            nm = self.message(m, f"{where}[{i}]", keep=False)
            seqs = self.by_key.get(_key(nm.role, nm.content, nm.tool_call_id), [])
            seq = next((s for s in seqs if s > last), seqs[0] if seqs else None)
            if seq is None:
                out.append(ContextItem(None, content=nm.content, role=nm.role))
            else:
                out.append(ContextItem(seq))
                last = max(last, seq)
        return out

    def model_event(self, ev: dict[str, Any], where: str, j: int) -> None:
        items = self.items(as_list(ev.get("input")), f"{where}.input")
        output, reply = self.outputs.pop(j) if j in self.outputs else self._output(ev, where)
        response = None
        if reply is not None:
            seqs = self.by_key.get(reply[1], [])
            newest = max((i.sequence for i in items if i.sequence is not None), default=-1)
            response = next((s for s in seqs if s > newest), seqs[-1] if seqs else None)
        if self.pending_compaction is not None:
            self._settle(items)
        usage = output.get("usage")
        took = output.get("time")
        err = ev.get("error")
        stored = [i.sequence for i in items if i.sequence is not None]
        self.anchor = max(
            [*stored, *([response] if response is not None else [])], default=self.anchor
        )
        self.b.llm_call(
            items,
            model=str(ev.get("model") or output.get("model") or ""),
            head_sequence=max(stored) if stored else None,
            response_sequence=response,
            usage=usage,
            latency_ms=float(took) * 1000 if isinstance(took, int | float) else None,
            error=dumps(err) if err else None,
            created_at=parse_time(ev.get("timestamp")) or 0.0,
            params=_params(ev),
        )

    def compaction_event(self, ev: dict[str, Any]) -> None:
        if self.pending_compaction is not None:
            self._settle([])
        self.pending_compaction = ev

    def _settle(self, next_input: list[ContextItem]) -> None:
        ev = self.pending_compaction
        self.pending_compaction = None
        if ev is None:
            return
        at = self.anchor
        after = [
            i for i in next_input if i.sequence is None or (at is not None and i.sequence <= at)
        ]
        before, tokens_after = ev.get("tokens_before"), ev.get("tokens_after")
        self.b.compaction(
            at,
            after,
            trigger=str(ev.get("source") or "inspect"),
            tokens_before=int(before) if isinstance(before, int) else None,
            tokens_after=int(tokens_after) if isinstance(tokens_after, int) else None,
            details={
                "type": ev.get("type") or "summary",
                "tokens_after": ev.get("tokens_after"),
                "source": ev.get("source"),
            },
            created_at=parse_time(ev.get("timestamp")) or 0.0,
        )


def _params(ev: dict[str, Any]) -> Any:
    """A model event's ``config``, and ``tool_definitions``: how many tools the call was
    sent (``tools``, recorded by every model event; 0 is known none), which the
    transcript's messages do not hold (``core/inspector/recorded.py:gap_words``)."""
    config = scrub(ev.get("config")) or None
    tools = ev.get("tools")
    if not isinstance(tools, list) or not (config is None or isinstance(config, dict)):
        return config
    return {**(config or {}), "tool_definitions": len(tools)}


def _resolve(value: Any, refs: dict[str, Any]) -> Any:
    """``value`` with ``attachment://`` (and ``tc://``) references replaced by their text."""
    if isinstance(value, str):
        if value.startswith(REF_PREFIXES):
            hit = refs.get(value.split("://", 1)[1])
            return hit if hit is not None else value
        return value
    if isinstance(value, list):
        return [_resolve(v, refs) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, refs) for k, v in value.items()}
    return value


def _key(role: str, text: str, call_id: str | None) -> str:
    return hashlib.sha1(f"{role}\0{call_id or ''}\0{text}".encode("utf-8", "replace")).hexdigest()


def _sample_trace(
    w: Writer,
    ctx: ImportContext,
    unit: ImportUnit,
    where: str,
    header: dict[str, Any],
    sample: dict[str, Any],
    summary_of: Any,
) -> ImportResult:
    ctx.where = where
    ctx.source_begins()  # the header's times are read again for each sample, below
    ev = as_dict(header.get("eval"))
    transcript = as_dict(sample.get("transcript"))
    refs = dict(as_dict(transcript.get("content")))
    refs.update(as_dict(sample.get("attachments")))
    summary = sample_summary(sample, lambda v: _resolve(v, refs))
    meta = {
        "sample": summary,
        "task": ev.get("task"),
        "model": ev.get("model"),
        "run_id": ev.get("run_id"),
        "sample_id": sample.get("id"),
        "epoch": sample.get("epoch"),
        "target": sample.get("target"),
        "scores": sample.get("scores"),
        "model_usage": sample.get("model_usage"),
        "status": header.get("status"),
        "version": header.get("version"),
    }
    events = sample.get("events")
    if events is None:
        events = transcript.get("events")
    span = _span(sample, as_list(events))
    created = parse_time(sample.get("started_at")) or parse_time(ev.get("created"))
    b = TraceBuilder(
        w,
        ctx,
        FORMAT,
        str(unit.path),
        sample_title(str(ev.get("task") or unit.main.stem), summary),
        {"eval": summary_of(header), **scrub({k: v for k, v in meta.items() if v is not None})},
        created,
        span=span,
    )
    s = _Sample(b, ctx, where, refs)
    s.read_times(sample, as_list(events))
    messages = sample.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise InvalidInputError(f"{where}: 'messages' must be a list")
    for i, m in enumerate(as_list(messages)):
        s.add(s.message(m, f"{where}.messages[{i}]"))
    for j, e in enumerate(as_list(events)):
        e = as_dict(e)
        kind = e.get("event")
        if kind == "model":
            s.model_event(e, f"{where}.events[{j}]", j)
        elif kind == "compaction":
            s.compaction_event(e)
    if s.pending_compaction is not None:
        s._settle([])
    return b.finish()


def _event_time(ev: dict[str, Any]) -> float | None:
    """When an event's result came: ``completed`` (recorded since early 2025), else its
    ``timestamp`` (when a model event started, in those releases; when it was logged, in
    2024's, after the call)."""
    return parse_time(ev.get("completed")) or parse_time(ev.get("timestamp"))


def _span(sample: dict[str, Any], events: list[Any]) -> tuple[float, float] | None:
    """When the sample ran: ``started_at``/``completed_at``, else its events' timestamps."""
    times = [parse_time(sample.get("started_at")), parse_time(sample.get("completed_at"))]
    known = [x for x in times if x]
    if not known:  # events are in time order: the first and the last dated one
        dated = [e for e in events if isinstance(e, dict) and e.get("timestamp")]
        stamps = [parse_time(e["timestamp"]) for e in dated[:1] + dated[-1:]]
        known = [x for x in stamps if x]
    return (min(known), max(known)) if known else None


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    path = unit.main
    samples = _eval_samples(path, ctx) if zipfile.is_zipfile(path) else _json_samples(path, ctx)
    results: list[ImportResult] = []
    empty = 0
    summaries: dict[int, dict[str, Any]] = {}

    def summary_of(header: dict[str, Any]) -> dict[str, Any]:
        """The eval's header summary, made (and scrubbed) once per log, not per sample."""
        if id(header) not in summaries:
            summaries[id(header)] = scrub(eval_summary(header, path.name))
        return summaries[id(header)]

    for where, header, sample in samples:
        ctx.check()
        if has_content(sample):
            results.append(_sample_trace(w, ctx, unit, where, header, sample, summary_of))
        else:
            empty += 1
    if not results:
        raise InvalidInputError(
            f"{path}: {empty} samples, none with messages; nothing to import"
            if empty
            else f"{path}: the log holds no samples"
        )
    if empty:
        note = f"{path}: skipped {empty} samples with no messages (imported {len(results)})"
        results[0] = replace(results[0], warnings=(*results[0].warnings, note))
    return results
