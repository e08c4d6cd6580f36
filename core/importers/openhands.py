"""OpenHands conversations: V0 trajectories and V1 (agent SDK) event logs.

V0 writes a JSON list of events: actions (``message``, ``run``, ``edit``, ``finish``…)
carrying ``tool_call_metadata.model_response`` (the exact chat completion, usage
included) and observations answering them (``cause``, ``tool_call_id``). V1 writes one
event per file (``event-00012-<id>.json``, beside a ``base_state.json``) or JSON Lines:
``SystemPromptEvent``, ``MessageEvent``, ``ActionEvent`` (grouped into one assistant message
per ``llm_response_id``), ``ObservationEvent`` and the rest. ``Condensation`` events
(V1) and ``condensation`` actions (V0) are compaction boundaries: the forgotten events
leave the context and the summary is inserted at ``summary_offset``. Everything that is
not conversation (state updates, agent state changes) is kept as ``meta`` messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.context.view import current_items
from core.errors import InvalidInputError
from core.importers.base import (
    ImportContext,
    ImportResult,
    ImportUnit,
    PendingReply,
    TraceBuilder,
)
from core.importers.content import (
    as_dict,
    as_list,
    content_with_images,
    dumps,
    image_ref,
    role_of,
    scrub,
    text_of,
)
from core.importers.idmap import IdMap
from core.importers.jsonstream import JsonDocument, read_document
from core.importers.openhands_stats import StatsCalls
from core.importers.reading import CountingReader, iter_jsonl
from core.importers.times import (
    LocalOffset,
    SourceClock,
    local_offset,
    offset_text,
    parse_time,
    read_time,
)
from core.records import ContextItem, NewMessage, ToolCall
from core.store.writer import Writer

FORMAT = "openhands"
V1_CONVERSATION = frozenset(
    {
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "AgentErrorEvent",
        "UserRejectObservation",
        "Condensation",
        "CondensationSummaryEvent",
    }
)


@dataclass
class _Reply:
    """Actions of one model response (V1 ``llm_response_id`` / V0 ``model_response.id``)."""

    key: str
    events: list[dict[str, Any]] = field(default_factory=list)


class _Conversation:
    def __init__(self, b: TraceBuilder, ctx: ImportContext, clock: SourceClock) -> None:
        self.b = b
        self.ctx = ctx
        self.time_of = clock.read
        """The time of an event (its naive wall clock at the recording machine's offset)."""
        self.tail: int | None = None
        self.events = IdMap(b.w.conn)
        self.reply: _Reply | None = None
        self.call_names: dict[str, str] = {}
        self.where = ""
        self.unknown: dict[str, tuple[int, str]] = {}
        self.replies: list[PendingReply] = []
        """One per model response (calls, at the end)."""
        self.stats = StatsCalls()
        self.pending: tuple[dict[str, Any], str, float, int | None] | None = None
        """A call the last ``stats`` update recorded, waiting for its response's events:
        usage, model, time, and the last message then (what the call was sent: a response
        missing from the events leaves the call at that head, not at a later tool result)."""

    # -- writing ------------------------------------------------------------------------
    def _add(self, nm: NewMessage, event_ids: list[Any]) -> int:
        self.tail = self.b.add(nm, self.tail)
        for eid in event_ids:
            if eid is not None:
                self.events[str(eid)] = self.tail
        return self.tail

    def _meta(self, ev: dict[str, Any], label: str) -> None:
        self.flush()
        self._add(
            NewMessage(
                "system",
                label[:500],
                kind="meta",
                created_at=self.time_of(ev.get("timestamp")),
                metadata=scrub(ev),
            ),
            [ev.get("id")],
        )

    def flush(self) -> None:
        reply, self.reply = self.reply, None
        if reply is None or not reply.events:
            return
        if reply.events[0].get("kind") == "ActionEvent":
            self._v1_reply(reply)
        else:
            self._v0_reply(reply)

    def _gather(self, key: str, ev: dict[str, Any]) -> None:
        """The events of one model response gather in one reply (flushed when the next
        response, or any other event, begins)."""
        if self.reply is None or self.reply.key != key:
            self.flush()
            self.reply = _Reply(key)
        self.reply.events.append(ev)

    # -- V1 -----------------------------------------------------------------------------
    def v1(self, ev: dict[str, Any]) -> None:
        kind = ev.get("kind")
        if not isinstance(kind, str):
            raise InvalidInputError(f"{self.where}: event has no 'kind'")
        if kind == "ActionEvent":
            self._gather(str(ev.get("llm_response_id") or ev.get("id")), ev)
            return
        self.flush()
        when = self.time_of(ev.get("timestamp"))
        if kind == "SystemPromptEvent":
            text = text_of(ev.get("system_prompt"))
            tools = [
                as_dict(as_dict(t).get("function")).get("name") or as_dict(t).get("name")
                for t in as_list(ev.get("tools"))
            ]
            self._add(
                NewMessage(
                    "system",
                    text,
                    kind="system_prompt",
                    created_at=when,
                    metadata={"tools": [t for t in tools if t]},
                ),
                [ev.get("id")],
            )
        elif kind == "MessageEvent":
            self._v1_message(ev, when)
        elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            self._v1_observation(ev, kind, when)
        elif kind == "Condensation":
            self._condensation(
                ev, [str(x) for x in as_list(ev.get("forgotten_event_ids"))], when, "condenser"
            )
        elif kind == "CondensationSummaryEvent":
            self._add(
                NewMessage("user", str(ev.get("summary") or ""), kind="summary", created_at=when),
                [ev.get("id")],
            )
        else:
            if kind == "ConversationStateUpdateEvent" and ev.get("key") == "stats":
                self._stats(ev.get("value"), when or 0.0)
            if not kind.endswith(("Event", "Request", "Observation")):
                count, first = self.unknown.get(kind, (0, self.where))
                self.unknown[kind] = (count + 1, first)
            label = f"{kind} {ev.get('key') or ''}".strip()
            self._meta(ev, label)

    def _stats(self, value: Any, when: float) -> None:
        """A call the update records; one still unclaimed had no response in the events."""
        call = self.stats.update(value)
        self._unclaimed()
        if call is not None:
            self.pending = (*call, when, self.tail)

    def _unclaimed(self) -> None:
        if self.pending is not None:  # at the head it had when it was made: a tool result
            usage, model, when, head = self.pending  # logged after it was not sent with it
            self.replies.append((head, None, usage, model, when))
            self.pending = None

    def _claim(self) -> tuple[Any, str]:
        """The usage and model of the pending call, for the response now written."""
        pending, self.pending = self.pending, None
        return (pending[0], pending[1]) if pending is not None else (None, "")

    def _v1_message(self, ev: dict[str, Any], when: float | None) -> None:
        msg = as_dict(ev.get("llm_message"))
        role = role_of(msg.get("role") or ev.get("source"))
        text, parts = self._content(msg.get("content"))
        thinking = msg.get("reasoning_content")
        if thinking:
            parts = (*(parts or ()), {"type": "thinking", "thinking": str(thinking)})
        md = {k: ev[k] for k in ("activated_skills", "extended_content") if ev.get(k)}
        head = self.tail
        seq = self._add(
            NewMessage(
                role,
                text,
                parts=parts,
                created_at=when,
                metadata={"source": ev.get("source"), **md},
            ),
            [ev.get("id")],
        )
        if role == "assistant" and (self.pending is not None or ev.get("llm_response_id")):
            usage, model = self._claim()
            self.replies.append((head, seq, usage, model, when or 0.0))

    def _v1_reply(self, reply: _Reply) -> None:
        texts: list[str] = []
        calls: list[ToolCall] = []
        parts: list[Any] = []
        for ev in reply.events:
            thought = text_of(ev.get("thought"))
            if thought:
                texts.append(thought)
            if ev.get("reasoning_content") and not parts:
                parts.append({"type": "thinking", "thinking": str(ev["reasoning_content"])})
            tc = as_dict(ev.get("tool_call"))
            call_id = str(tc.get("id") or ev.get("tool_call_id") or f"call-{ev.get('id')}")
            name = str(tc.get("name") or ev.get("tool_name") or "")
            args = tc.get("arguments")
            if args is None:
                args = {k: v for k, v in as_dict(ev.get("action")).items() if k != "kind"}
            calls.append(ToolCall(call_id, name, dumps(args)))
            self.call_names[call_id] = name
        first = reply.events[0]
        text = "\n\n".join(texts)
        if parts:
            parts.insert(0, {"type": "text", "text": text})
        head = self.tail
        seq = self._add(
            NewMessage(
                "assistant",
                text,
                parts=tuple(parts) if parts else None,
                tool_calls=tuple(calls),
                created_at=self.time_of(first.get("timestamp")),
                metadata={"llm_response_id": first.get("llm_response_id")},
            ),
            [ev.get("id") for ev in reply.events],
        )
        if first.get("llm_response_id"):  # one model response; its usage from ``stats``
            when = self.time_of(first.get("timestamp")) or 0.0
            self.replies.append((head, seq, *self._claim(), when))

    def _v1_observation(self, ev: dict[str, Any], kind: str, when: float | None) -> None:
        obs = as_dict(ev.get("observation"))
        parts: tuple[Any, ...] | None = None
        if kind == "AgentErrorEvent":
            text = str(ev.get("error") or "")
        elif kind == "UserRejectObservation":
            text = str(ev.get("rejection_reason") or "rejected by the user")
        else:
            text, parts = self._content(obs.get("content"))
        call_id = str(ev.get("tool_call_id") or "")
        if call_id and call_id not in self.call_names:
            self.ctx.note("tool result without a matching tool call", self.where)
        md = {k: v for k, v in obs.items() if k != "content"}
        if kind != "ObservationEvent" or obs.get("is_error"):
            md["is_error"] = True
        self._add(
            NewMessage(
                "tool",
                text,
                parts=parts,
                tool_call_id=call_id or None,
                name=str(ev.get("tool_name") or self.call_names.get(call_id) or "") or None,
                created_at=when,
                metadata={"action_id": ev.get("action_id"), **md},
            ),
            [ev.get("id")],
        )

    def _content(self, value: Any) -> tuple[str, tuple[Any, ...] | None]:
        return content_with_images(self.b, value, self.where, _image_urls)

    # -- V0 -----------------------------------------------------------------------------
    def v0(self, ev: dict[str, Any]) -> None:
        if "action" not in ev and "observation" not in ev:
            raise InvalidInputError(f"{self.where}: event is neither an action nor an observation")
        tcm = as_dict(ev.get("tool_call_metadata"))
        response = as_dict(tcm.get("model_response"))
        if "action" in ev and ev.get("source") == "agent" and response:
            self._gather(str(response.get("id") or ev.get("id")), ev)
            return
        self.flush()
        when = self.time_of(ev.get("timestamp"))
        args = as_dict(ev.get("args"))
        action = ev.get("action")
        if action == "message":
            role = role_of("user" if ev.get("source") == "user" else "assistant")
            text = str(args.get("content") or ev.get("message") or "")
            parts = None
            urls = as_list(args.get("image_urls"))
            if urls:
                parts = (
                    {"type": "text", "text": text},
                    *(
                        image_ref(self.b, str(u), "", self.where, self.b.next_sequence)
                        for u in urls
                    ),
                )
            self._add(
                NewMessage(
                    role, text, parts=parts, created_at=when, metadata={"source": ev.get("source")}
                ),
                [ev.get("id")],
            )
        elif action == "system":
            self._add(
                NewMessage(
                    "system",
                    str(args.get("content") or ev.get("message") or ""),
                    kind="system_prompt",
                    created_at=when,
                ),
                [ev.get("id")],
            )
        elif action == "condensation":
            self._condensation(ev, _v0_forgotten(args), when, "condenser", args)
        elif "observation" in ev and tcm.get("tool_call_id"):
            call_id = str(tcm["tool_call_id"])
            self._add(
                NewMessage(
                    "tool",
                    str(
                        ev.get("content")
                        if ev.get("content") is not None
                        else ev.get("message") or ""
                    ),
                    tool_call_id=call_id,
                    name=str(tcm.get("function_name") or self.call_names.get(call_id) or "")
                    or None,
                    created_at=when,
                    metadata={
                        "observation": ev.get("observation"),
                        "cause": ev.get("cause"),
                        "extras": ev.get("extras"),
                    },
                ),
                [ev.get("id")],
            )
        else:
            label = f"{action or ev.get('observation')}: {str(ev.get('message') or '')[:200]}"
            self._meta(ev, label)

    def _v0_reply(self, reply: _Reply) -> None:
        first = reply.events[0]
        response = as_dict(as_dict(first.get("tool_call_metadata")).get("model_response"))
        choice = as_dict((as_list(response.get("choices")) or [{}])[0])
        msg = as_dict(choice.get("message"))
        calls: list[ToolCall] = []
        for c in as_list(msg.get("tool_calls")):
            call = ToolCall.from_json(as_dict(c)) if as_dict(c).get("function") else None
            if call is not None:
                calls.append(call)
                self.call_names[call.id] = call.name
        text = text_of(msg.get("content"))
        head = self.tail
        when = self.time_of(first.get("timestamp"))
        seq = self._add(
            NewMessage(
                "assistant",
                text,
                tool_calls=tuple(calls),
                usage=response.get("usage"),
                created_at=when,
                metadata={
                    "model": response.get("model"),
                    "response_id": response.get("id"),
                    "actions": [ev.get("action") for ev in reply.events],
                },
            ),
            [ev.get("id") for ev in reply.events],
        )
        model = str(response.get("model") or "")
        self.replies.append((head, seq, response.get("usage"), model, when or 0.0))

    # -- compaction ---------------------------------------------------------------------
    def _condensation(
        self,
        ev: dict[str, Any],
        forgotten: list[str],
        when: float | None,
        trigger: str,
        args: dict[str, Any] | None = None,
    ) -> None:
        args = args if args is not None else ev
        at = self.tail
        gone = {s for s in (self.events.get(e) for e in forgotten) if s is not None}
        summary_text = args.get("summary")
        summary = None
        if isinstance(summary_text, str) and summary_text:  # on the main path, after ``at``
            summary = self._add(
                NewMessage("user", summary_text, kind="summary", created_at=when), []
            )
        after: list[ContextItem] = []
        if at is not None:
            self.b.flush()
            self.b.w.flush()
            items, _ = current_items(self.b.w.read, self.b.trace_id, at)
            after = [i for i in items if i.sequence not in gone]
        if summary is not None:
            offset = args.get("summary_offset")
            pos = offset if isinstance(offset, int) and 0 <= offset <= len(after) else len(after)
            after.insert(pos, ContextItem(summary))
        self.b.compaction(
            summary if summary is not None else at,
            after,
            before_at=at,
            trigger=trigger,
            summary_sequence=summary,
            details={
                "forgotten_events": len(forgotten),
                "event_id": ev.get("id"),
                "llm_response_id": args.get("llm_response_id"),
            },
            created_at=when or 0.0,
        )
        if ev.get("id") is not None and self.tail is not None:
            self.events[str(ev["id"])] = self.tail

    def finish(self) -> None:
        self.flush()
        self._unclaimed()
        self.b.reply_calls(self.replies)
        for kind, (count, first) in self.unknown.items():
            self.ctx.warn(f"{first}: {count} event(s) of unknown kind {kind!r} kept as metadata")

    def close(self) -> None:
        self.events.close()


def _image_urls(block: dict[str, Any]) -> list[str] | None:
    """The URLs of an OpenHands V1 image block (``image_urls``)."""
    if block.get("type") != "image":
        return None
    return [str(url) for url in as_list(block.get("image_urls"))]


def _v0_forgotten(args: dict[str, Any]) -> list[str]:
    ids = [str(x) for x in as_list(args.get("forgotten_event_ids"))]
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(start, int) and isinstance(end, int) and 0 <= end - start < 10_000_000:
        ids.extend(str(i) for i in range(start, end + 1))
    return ids


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    files = list(unit.files)
    state: dict[str, Any] = {}
    if files and files[0].name == "base_state.json":
        with files[0].open("rb") as f:
            state = as_dict(read_document(CountingReader(f, ctx), str(files[0])))
        files = files[1:]
    title = str(state.get("id") or (unit.path.name if unit.path.is_dir() else unit.path.stem))
    meta = scrub(
        {
            k: v
            for k, v in state.items()
            if k in ("id", "agent", "workspace", "max_iterations", "stats")
        }
    )
    b = TraceBuilder(w, ctx, FORMAT, str(unit.path), title, meta or None)
    offset = _local_offset(files, ctx)
    clock = SourceClock(offset)
    conv = _Conversation(b, ctx, clock)
    try:
        for path in files:
            _read(conv, ctx, path)
        conv.finish()
        basis = clock.basis()
        if basis is not None:
            b.set_metadata("time_basis", basis)
            if offset is not None and offset.agreeing < offset.pairs:
                ctx.warn(_offsets_differ(unit, offset))
        if not b.messages:
            raise InvalidInputError(_nothing_to_show(unit, bool(files)))
        b.set_title(b.first_text() or title)
        return [b.finish()]
    finally:
        conv.close()


RESPONSE_CREATED = "llm response created"
"""Where a V0 trajectory's absolute times come from: ``model_response.created``."""


def _local_offset(files: list[Path], ctx: ImportContext) -> LocalOffset | None:
    """The UTC offset of the machine that wrote a V0 trajectory's naive event times, read
    before any event is written (messages are stored once, with their time): each model
    response's ``created`` (epoch seconds, written by the LLM library) against the naive
    time of the first event that carries it. V1 events record no absolute time."""
    pairs: dict[str, tuple[float, float]] = {}
    for path in files:
        with path.open("rb") as raw:
            head = raw.read(1 << 16).lstrip()
        if not head.startswith(b"[") or _jsonl(head):
            continue  # an event file, or JSON Lines of events: V1
        try:
            with path.open("rb") as raw:
                doc = JsonDocument(CountingReader(raw, ctx, progress=False), str(path))
                doc.begin()
                for ev in doc.items():
                    _pair(as_dict(ev), pairs)
        except InvalidInputError:
            pass  # the pairs before it stand; the import itself reports the error
    return local_offset(pairs.values(), RESPONSE_CREATED)


def _pair(ev: dict[str, Any], pairs: dict[str, tuple[float, float]]) -> None:
    response = as_dict(as_dict(ev.get("tool_call_metadata")).get("model_response"))
    created, stamp = response.get("created"), ev.get("timestamp")
    if "kind" in ev or not isinstance(stamp, str) or isinstance(created, bool):
        return
    absolute = parse_time(created) if isinstance(created, int | float) else None
    if not absolute or absolute < 0:
        return
    key = str(response.get("id") or created)
    naive, is_naive = read_time(stamp)
    if is_naive and naive is not None and key not in pairs:
        pairs[key] = (naive, absolute)


def _offsets_differ(unit: ImportUnit, offset: LocalOffset) -> str:
    others = offset.pairs - offset.agreeing
    return (
        f"{unit.path}: times have no zone; {offset.agreeing} of {offset.pairs} model "
        f"responses put the recording machine at {offset_text(offset.minutes)} and "
        f"{others} at another offset (a clock change during the run?): all times were read "
        f"at {offset_text(offset.minutes)}"
    )


def _nothing_to_show(unit: ImportUnit, had_events: bool) -> str:
    if had_events:
        return f"{unit.path}: OpenHands events with no messages; nothing to import"
    return (
        f"{unit.path}: an OpenHands conversation's settings (base_state.json) without its "
        "events; open the conversation folder that holds the event-*.json files (or events/)"
    )


def _read(conv: _Conversation, ctx: ImportContext, path: Path) -> None:
    with path.open("rb") as raw:
        head = raw.read(1 << 16).lstrip()
    if _jsonl(head):
        for lineno, ev in iter_jsonl(path, ctx):
            conv.where = f"{path}:{lineno}"
            ctx.where = conv.where
            conv.v1(_obj(ev, conv.where))
        return
    with path.open("rb") as raw:
        doc = JsonDocument(CountingReader(raw, ctx), str(path))
        if doc.peek() == "[":
            doc.begin()
            for i, ev in enumerate(doc.items()):
                conv.where = f"{path}: event[{i}]"
                ctx.where = conv.where
                ev = _obj(ev, conv.where)
                if "kind" in ev:
                    conv.v1(ev)
                else:
                    conv.v0(ev)
        else:
            conv.where = str(path)
            ctx.where = conv.where
            conv.v1(_obj(doc.value(), conv.where))
        doc.end()


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInputError(f"{where}: expected an event object, found {type(value).__name__}")
    return value


def _jsonl(head: bytes) -> bool:
    first, sep, rest = head.partition(b"\n")
    if not sep or not rest.strip():
        return False
    try:
        return isinstance(json.loads(first), dict)
    except ValueError:
        return False
