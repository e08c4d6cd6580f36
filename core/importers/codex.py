"""OpenAI Codex CLI rollouts (``~/.codex/sessions/…/rollout-*.jsonl``).

Each line is ``{timestamp, type, payload}``. ``response_item`` lines are what the model
saw and said (Responses API items); consecutive output items (reasoning, text, tool calls)
form one assistant message, and ``token_count`` events give its usage (written before or
after the items, depending on the version). ``event_msg`` lines are the UI's copy of the
same turn: user/agent message events duplicate response items and are skipped; the rest
(command ends, patches, aborted turns) are kept as ``meta`` messages. A ``compacted``
line (its ``replacement_history`` is the new context) and a ``context_compacted`` event
become one compaction event; its summary (``message``) follows the last message before it on
the main path, and the event is anchored at the summary (as Claude Code's and ctxlens's own).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from core.errors import InvalidInputError
from core.importers.base import (
    ImportContext,
    ImportResult,
    ImportUnit,
    PendingReply,
    TraceBuilder,
)
from core.importers.content import as_dict, as_list, dumps, parse_time, role_of, text_of
from core.importers.idmap import IdMap
from core.importers.reading import iter_records
from core.records import ContextItem, MessageKind, NewMessage, ToolCall
from core.store.writer import Writer

FORMAT = "codex"
OUTPUT_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
RESULT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
#: UI events that repeat a response item: not shown twice.
DUPLICATE_EVENTS = frozenset(
    {
        "user_message",
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_message_delta",
        "agent_reasoning_delta",
    }
)
INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions")


@dataclass
class _Run:
    """Output items of one model response, not yet written."""

    items: list[dict[str, Any]] = field(default_factory=list)
    usage: Any = None
    created_at: float | None = None
    head: int | None = None
    reply: int | None = None
    """The first message written of it (live capture writes a run at each batch end and
    goes on with it until the response ends: ``_Rollout.write_pending``)."""
    noted: bool = False
    """Its call is already kept (the watch stopped before the response ended)."""
    open_call: int | None = None
    """The index of the call kept when a watch stopped before the response's
    ``token_count``: that usage, when it comes, is set on the call."""
    reply_of: int | None = None
    """The index of the call kept when a watch stopped after the response's
    ``token_count`` and before its items: the first message written of it is linked to
    the call as its response."""


class _Rollout:
    def __init__(self, b: TraceBuilder, ctx: ImportContext, name: str) -> None:
        self.b = b
        self.ctx = ctx
        self.name = name
        self.where = name
        self.tail: int | None = None
        self.run: _Run | None = None
        self.held: list[NewMessage] = []
        self.pending_usage: Any = None
        self.pending_when = 0.0
        """When ``pending_usage``'s ``token_count`` was logged: the time of a call kept
        without its response (a watch's stop stamped it with the stop's wall clock)."""
        self.last_usage: Any = None
        self.last_total: Any = None
        self.model = ""
        self.turn_context: str = ""
        self.call_names: dict[str, str] = {}
        self.call_seq = IdMap(b.w.conn)
        self.result_seq = IdMap(b.w.conn)
        self.user_seqs: list[int] = []
        self.by_text: dict[str, int] = {}
        self.compacted_since_output = False
        self.unknown: dict[str, tuple[int, str]] = {}
        self.web_searches = 0
        self.window: int | None = None
        self.replies: list[PendingReply] = []
        """Each model response that ended, recorded as a call by ``record_calls``."""
        self.orphan_noted = False
        """``pending_usage`` is already kept as a call (the watch stopped before its
        response's items came)."""
        self.stopped: tuple[_Run, int] | None = None
        """The run noted at a stop and its place in ``replies`` (its call's index is known
        once ``record_calls`` has recorded it)."""
        self.orphan_at: int | None = None
        """``pending_usage``'s place in ``replies`` when a stop kept it as a call."""
        self.orphan_call: int | None = None
        """That call's index, for the response's items if they come (``_Run.reply_of``)."""

    # -- dispatch -----------------------------------------------------------------------
    def record(self, lineno: int, rec: dict[str, Any]) -> None:
        self.where = f"{self.name}:{lineno}"
        self.ctx.where = self.where
        kind = rec.get("type")
        when = parse_time(rec.get("timestamp"))
        if "payload" not in rec:  # rollouts before the wrapper: bare items
            if lineno == 1 and "instructions" in rec:
                self._meta_info(rec, when)
            elif kind in OUTPUT_ITEMS | RESULT_ITEMS or kind == "message":
                self.item(rec, when)
            elif rec.get("record_type") != "state":
                self._unknown(str(kind))
            return
        payload = rec.get("payload")
        if not isinstance(payload, dict):
            raise InvalidInputError(f"{self.where}: 'payload' must be an object")
        if kind == "response_item":
            self.item(payload, when)
        elif kind == "event_msg":
            self.event(payload, when)
        elif kind == "compacted":
            self.compacted(payload, when)
        elif kind == "session_meta":
            self._meta_info(payload, when)
        elif kind == "turn_context":
            self._turn_context(payload, when)
        else:
            self._unknown(str(kind))

    def _unknown(self, kind: str) -> None:
        count, first = self.unknown.get(kind, (0, self.where))
        self.unknown[kind] = (count + 1, first)

    def _meta_info(self, payload: dict[str, Any], when: float | None) -> None:
        """The session's instructions as its system prompt, dated by the record that holds
        them (as every other message is by its record)."""
        instructions = as_dict(payload.get("base_instructions")).get("text") or payload.get(
            "instructions"
        )
        if isinstance(instructions, str) and instructions.strip() and self.tail is None:
            self._add(NewMessage("system", instructions, kind="system_prompt", created_at=when))

    def _turn_context(self, payload: dict[str, Any], when: float | None) -> None:
        self.model = str(payload.get("model") or self.model)
        key = dumps({k: v for k, v in payload.items() if k != "turn_id"})
        if key != self.turn_context:
            self.turn_context = key
            self._meta(
                "turn_context", f"turn context: model {payload.get('model') or '?'}", payload, when
            )

    # -- writing ------------------------------------------------------------------------
    def _add(self, nm: NewMessage) -> int:
        self.tail = self.b.add(nm, self.tail)
        return self.tail

    def _meta(self, kind: str, text: str, payload: Any, when: float | None) -> None:
        nm = NewMessage(
            "system",
            text[:500],
            kind="meta",
            created_at=when,
            metadata={"type": kind, **as_dict(payload)},
        )
        if self.run is not None:
            self.held.append(nm)
        else:
            self._add(nm)

    def flush(self) -> None:
        """The response ends: write what is left of it, keep its call."""
        run, self.run = self.run, None
        if run is not None:
            if run.items:
                self._write_run(run)
            self._note(run)
        self._write_held()

    def write_pending(self) -> None:
        """Write what arrived (live capture, at a batch end); the response stays open, as
        in a full read: its ``token_count`` or more of its items may be in the next lines
        (more items become a second message of the same response, still one call)."""
        if self.run is not None and self.run.items:
            self._write_run(self.run)
        self._write_held()

    def open_calls(self) -> int:
        """Responses begun whose calls are not kept yet (live capture)."""
        run_open = self.run is not None and self.run.reply is not None and not self.run.noted
        usage_open = self.pending_usage is not None and not self.orphan_noted
        return int(run_open) + int(usage_open)

    def note_open_calls(self) -> None:
        """Keep the calls of ``open_calls`` as they stand (live capture stops; the rest of
        such a response, if it ever comes, joins its message, not its call)."""
        self.write_pending()
        if self.run is not None and self.run.reply is not None and not self.run.noted:
            self._note(self.run)
            if self.run.usage is None:  # its token_count is still to come
                self.stopped = (self.run, len(self.replies) - 1)
        if self.pending_usage is not None and not self.orphan_noted:
            self._orphan_reply()
            self.orphan_noted = True
            self.orphan_at = len(self.replies) - 1

    def _write_held(self) -> None:
        for nm in self.held:
            self._add(nm)
        self.held = []

    def _note(self, run: _Run) -> None:
        if run.reply is not None and not run.noted:
            run.noted = True
            self.replies.append((run.head, run.reply, run.usage, self.model, run.created_at or 0.0))

    def _write_run(self, run: _Run) -> None:
        texts: list[str] = []
        thinking: list[str] = []
        parts: list[Any] = []
        calls: list[ToolCall] = []
        for item in run.items:
            item_type = item.get("type")
            if item_type == "message":
                text = text_of(item.get("content"))
                texts.append(text)
                parts.append({"type": "text", "text": text})
            elif item_type == "reasoning":
                summary = "\n".join(text_of(s) for s in as_list(item.get("summary")))
                body = text_of(item.get("content")) if item.get("content") else ""
                thought = "\n".join(x for x in (summary, body) if x)
                thinking.append(thought)
                part: dict[str, Any] = {"type": "thinking", "thinking": thought}
                if item.get("encrypted_content"):
                    part["encrypted"] = True
                parts.append(part)
            else:
                calls.append(self._call(item))
        text = "\n\n".join(t for t in texts if t.strip())
        kind: MessageKind = "message"
        if not text and not calls:
            kind, text = "thinking", "\n\n".join(t for t in thinking if t)
        usage = run.usage if run.usage is not None else None
        run.items = []
        if run.reply is None:
            run.head = self.tail
        seq = self._add(
            NewMessage(
                "assistant",
                text,
                parts=tuple(parts) if thinking else None,
                tool_calls=tuple(calls),
                kind=kind,
                usage=usage,
                created_at=run.created_at,
                metadata={"model": self.model} if self.model else None,
            )
        )
        for call in calls:
            self.call_seq[call.id] = seq
        if run.reply is None:
            run.reply = seq
            if run.reply_of is not None:  # its call was kept at a stop, before this came
                self.b.set_call_response(run.reply_of, seq, run.created_at or 0.0)
                run.reply_of = None

    def note_window(self) -> None:
        """The window the rollout recorded so far (``model_context_window``), in the
        trace's metadata. A watch notes it after each batch, an import once at the end."""
        if self.window is None:
            return
        window = {"tokens": self.window, "field": "model_context_window"}
        meta = self.b.metadata
        if not isinstance(meta, dict) or meta.get("window") != window:
            self.b.set_metadata("window", window)

    def record_calls(self) -> None:
        """One LLM call per model response (each ``token_count`` event), in file order: the
        responses that ended since the last time (all of them after a full read)."""
        replies, self.replies = self.replies, []
        calls = self.b.reply_calls(replies)
        if self.stopped is not None:
            run, at = self.stopped
            self.stopped = None
            if calls:  # (none when the contexts were too large to keep as calls)
                run.open_call = calls[at].call_index
        if self.orphan_at is not None:
            at, self.orphan_at = self.orphan_at, None
            if calls:
                self.orphan_call = calls[at].call_index

    def _call(self, item: dict[str, Any]) -> ToolCall:
        kind = item.get("type")
        call_id = item.get("call_id") or item.get("id")
        if kind == "web_search_call":
            self.web_searches += 1
            call_id = call_id or f"web_search-{self.web_searches}"
            return ToolCall(str(call_id), "web_search", dumps(item.get("action") or {}))
        name = str(item.get("name") or ("shell" if kind == "local_shell_call" else kind))
        if kind == "function_call":
            args = item.get("arguments")
        elif kind == "custom_tool_call":
            args = item.get("input")
        else:
            args = item.get("action")
        call_id = str(call_id or f"call-{self.b.next_sequence}")
        self.call_names[call_id] = name
        return ToolCall(call_id, name, dumps(args if args is not None else {}))

    # -- items --------------------------------------------------------------------------
    def item(self, item: dict[str, Any], when: float | None) -> None:
        kind = item.get("type")
        role = item.get("role")
        if kind in OUTPUT_ITEMS or (kind == "message" and role == "assistant"):
            if self.run is None:
                self.run = _Run(usage=self.pending_usage, created_at=when)
                self.run.noted = self.orphan_noted  # kept already, when the watch stopped
                if self.orphan_noted:  # ... without its response, which begins here
                    self.run.reply_of, self.orphan_call = self.orphan_call, None
                self.pending_usage, self.orphan_noted = None, False
            self.run.items.append(item)
            self.compacted_since_output = False
            return
        self.flush()
        if kind == "message":
            self._input_message(item, when)
        elif kind in RESULT_ITEMS:
            self._result(item, when)
        else:
            self._unknown(f"response_item/{kind}")
        self.compacted_since_output = False

    def _input_message(self, item: dict[str, Any], when: float | None) -> None:
        text = text_of(item.get("content"))
        role = role_of("system" if item.get("role") in ("developer", "system") else "user")
        injected = role == "system" or text.lstrip().startswith(INJECTED_PREFIXES)
        seq = self._add(
            NewMessage(
                role,
                text,
                kind="injected_context" if injected else "message",
                created_at=when,
                metadata={"role": item.get("role")},
            )
        )
        if role == "user":
            self.user_seqs.append(seq)
        if len(self.by_text) < 10_000:
            self.by_text[_key(text)] = seq

    def _result(self, item: dict[str, Any], when: float | None) -> None:
        call_id = str(item.get("call_id") or "")
        output = item.get("output")
        meta: dict[str, Any] = {}
        if isinstance(output, dict):
            meta = {k: v for k, v in output.items() if k != "content"}
            output = output.get("content", output)
        seq = self._add(
            NewMessage(
                "tool",
                text_of(output),
                tool_call_id=call_id,
                name=self.call_names.pop(call_id, None),
                created_at=when,
                metadata=meta or None,
            )
        )
        self.result_seq[call_id] = seq

    # -- events -------------------------------------------------------------------------
    def event(self, payload: dict[str, Any], when: float | None) -> None:
        kind = str(payload.get("type"))
        if kind in DUPLICATE_EVENTS:
            return
        if kind == "token_count":
            info = as_dict(payload.get("info"))
            usage = info.get("last_token_usage")
            window = info.get("model_context_window")
            if isinstance(window, int) and not isinstance(window, bool) and window > 0:
                self.window = window
            if usage is None or info.get("total_token_usage") == self.last_total:
                return  # no usage yet, or the same response reported twice
            self.last_total = info.get("total_token_usage")
            self.last_usage = usage
            if self.run is not None:
                self.run.usage = usage
                if self.run.open_call is not None:  # recorded at a stop, without it
                    self.b.set_call_usage(self.run.open_call, usage)
                    self.run.open_call = None
                self.flush()
            else:
                self._orphan()
                self.pending_usage, self.pending_when = usage, when or 0.0
            return
        if kind == "context_compacted":
            if not self.compacted_since_output:
                self.compacted({}, when)
            return
        if kind == "turn_aborted":
            self.flush()
            self._meta(
                kind, f"turn aborted: {payload.get('reason') or 'unknown reason'}", payload, when
            )
            return
        detail = payload.get("call_id") or payload.get("turn_id") or payload.get("reason") or ""
        self._meta(kind, f"{kind} {detail}".strip(), payload, when)

    def compacted(self, payload: dict[str, Any], when: float | None) -> None:
        self.flush()
        at = self.tail
        summary_text = str(payload.get("message") or "")
        summary = None
        if summary_text:  # on the main path, where Codex put it into the model's context
            summary = self._add(NewMessage("user", summary_text, kind="summary", created_at=when))
        history = payload.get("replacement_history")
        if isinstance(history, list):
            after = [self._context_item(item, summary_text, summary) for item in history]
            if summary is not None and not any(i.sequence == summary for i in after):
                after.append(ContextItem(summary))
        else:
            after = [ContextItem(s) for s in self.user_seqs]
            if summary is not None:
                after.append(ContextItem(summary))
        before = None
        if isinstance(self.last_usage, dict):
            total = self.last_usage.get("input_tokens", 0) + self.last_usage.get("output_tokens", 0)
            before = int(total) if isinstance(total, int | float) else None
        self.b.compaction(
            summary if summary is not None else at,
            after,
            before_at=at,
            trigger="unknown",
            summary_sequence=summary,
            tokens_before=before,
            details={
                "source": "compacted" if payload else "context_compacted",
                "replacement_items": len(history) if isinstance(history, list) else None,
            },
            created_at=when or 0.0,
        )
        self.compacted_since_output = True

    def _context_item(self, item: Any, summary_text: str, summary: int | None) -> ContextItem:
        item = as_dict(item)
        kind = item.get("type")
        if kind == "message":
            text = text_of(item.get("content"))
            if summary is not None and summary_text and summary_text.strip() in text:
                return ContextItem(summary)
            seq = self.by_text.get(_key(text))
            if seq is not None:
                return ContextItem(seq)
            role = "assistant" if item.get("role") == "assistant" else "user"
            if item.get("role") in ("developer", "system"):
                role = "system"
            return ContextItem(None, content=text, role=role)  # type: ignore[arg-type]
        call_id = str(item.get("call_id") or "")
        seq = None
        if kind in RESULT_ITEMS:
            seq = self.result_seq.get(call_id)
        elif kind in OUTPUT_ITEMS:
            seq = self.call_seq.get(call_id)
        if seq is not None:
            return ContextItem(seq)
        return ContextItem(None, content=f"[{kind}] {dumps(item)[:2000]}", role="user")

    def _orphan(self) -> None:
        """Usage of a response whose output items were never logged (an aborted turn):
        still a model call, with no reply."""
        if self.pending_usage is not None:
            self.flush()
            if not self.orphan_noted:
                self._orphan_reply()
            self.pending_usage, self.orphan_noted = None, False

    def _orphan_reply(self) -> None:
        """``pending_usage`` as a call with no response, at the time it was logged."""
        self.replies.append((self.tail, None, self.pending_usage, self.model, self.pending_when))

    def finish(self) -> None:
        self.flush()
        self._orphan()
        if self.unknown and self.b.messages == 0:
            kind, (_, first) = next(iter(self.unknown.items()))
            raise InvalidInputError(f"{first}: not a Codex rollout (record type {kind!r})")
        for kind, (count, first) in self.unknown.items():
            self.ctx.warn(f"{first}: {count} record(s) of unknown type {kind!r} skipped")

    def close(self) -> None:
        self.call_seq.close()
        self.result_seq.close()


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


def trace_info(head: dict[str, Any]) -> tuple[dict[str, Any], float | None]:
    """The trace metadata and start time a rollout's first record gives."""
    meta = as_dict(head.get("payload")) if head.get("type") == "session_meta" else head
    info: dict[str, Any] = {
        k: meta[k]
        for k in ("id", "cwd", "originator", "cli_version", "model_provider", "git", "source")
        if k in meta
    }
    return info, parse_time(meta.get("timestamp") or head.get("timestamp"))


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    path = unit.main
    records = iter_records(path, ctx, str(path))
    first = next(records, None)
    if first is None:
        raise InvalidInputError(f"{path}: empty file")
    info, created = trace_info(first[1])
    b = TraceBuilder(w, ctx, FORMAT, str(unit.path), path.stem, info, created)
    rollout = _Rollout(b, ctx, str(path))
    try:
        rollout.record(*first)
        for lineno, rec in records:
            rollout.record(lineno, rec)
        rollout.finish()
        rollout.record_calls()
        rollout.note_window()
        b.set_title(b.first_text() or b.title)
        return [b.finish()]
    finally:
        rollout.close()
