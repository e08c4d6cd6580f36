"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON record per line, linked by ``uuid``/``parentUuid`` into a tree. The tree has
noise that is not conversation structure: an assistant reply is streamed as several
records sharing ``message.id``, tool results hang off the record that holds their
``tool_use``, and progress/hook records are written as side leaves. Reading in file order,
a *unit* collects one reply (its records merged into one message, usage counted once)
and the tool results and metadata records that follow it; the unit is written as a straight
chain, and every uuid in it points at the chain's end. A record whose parent points
elsewhere (an edit, a rewind, a second root) starts a real branch of the store tree.

Compaction: a ``compact_boundary`` system record (``logicalParentUuid`` = the last message
before it, ``compactMetadata.preTokens``) followed by the ``isCompactSummary`` user message
becomes a compaction event. The summary follows the boundary on the path it was written on
(where Claude Code put it into the model's context) and is the context after the boundary;
the event is anchored at the summary, as ctxlens's own compactions are, and what left the
context is the View at the logical parent. ``summary`` records are titles (``leafUuid``),
not compactions.

Subagents: inline ``isSidechain`` records, flat ``agent-<id>.jsonl`` files and
``<session>/subagents/agent-<id>.jsonl`` files become ``subagent`` side branches hung on
the assistant message whose Task tool call started them (``agent-acompact-*`` transcripts,
the compaction's own model call, become ``compression`` branches from the context it
summarized, linked from the compaction event: ``details.summarizer``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.context.view import current_items
from core.errors import InvalidInputError
from core.importers.base import ImportContext, ImportResult, ImportUnit, TraceBuilder
from core.importers.content import as_dict, dumps, image_ref, parse_time, text_of
from core.importers.idmap import IdMap
from core.importers.reading import first_record, iter_records
from core.importers.titles import request_title
from core.importers.usage import open_at_stop
from core.records import ContextItem, NewMessage, ToolCall
from core.store.writer import Writer

FORMAT = "claude-code"
CONVERSATION = frozenset({"user", "assistant", "system"})
#: Record types kept as ``meta`` messages (never sent to a model).
META_TYPES = frozenset(
    {"progress", "file-history-snapshot", "queue-operation", "attachment", "last-prompt"}
)
TITLE_TYPES = frozenset({"summary", "custom-title", "ai-title"})
KNOWN_TYPES = CONVERSATION | META_TYPES | TITLE_TYPES
TASK_TOOLS = frozenset({"Task", "Agent"})
#: System records Claude Code writes once a turn is over: the reply before them is complete.
END_OF_TURN = frozenset({"stop_hook_summary", "turn_duration"})
CLEARED = "[Old tool result content cleared]"
SYNTHETIC = "<synthetic>"


def looks_like(record: dict[str, Any]) -> bool:
    """A first JSONL record written by Claude Code."""
    kind = record.get("type")
    if kind not in KNOWN_TYPES:
        return False
    return any(k in record for k in ("sessionId", "uuid", "parentUuid", "leafUuid", "messageId"))


def subagent_files(session: Path) -> list[Path]:
    """Subagent transcripts that belong to a session file, in both on-disk layouts."""
    found = sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))
    for flat in sorted(session.parent.glob("agent-*.jsonl")):
        head = first_record(flat)
        if head is not None and head.get("sessionId") == session.stem:
            found.append(flat)
    return found


@dataclass(slots=True)
class _Answer:
    """The reply of a unit as written so far: one API response, whose records a live
    capture may write as several messages (``_Session.write_pending``)."""

    head: int | None
    seq: int
    """The first message written (the call's response)."""
    created_at: float
    usage: Any
    model: str


@dataclass
class _Unit:
    parent: int | None
    """Where the unit's next message goes (the chain's end once some of it is written)."""
    group: str | None = None
    parts: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    """The tool results and metadata records after the reply, in file order."""
    tool_ids: set[str] = field(default_factory=set)
    new_tools: list[str] = field(default_factory=list)
    """Tool calls of ``parts`` (not yet written)."""
    uuids: list[str] = field(default_factory=list)
    mapped: int = 0
    """``uuids`` already in the node map."""
    answer: _Answer | None = None
    writes: int = 0
    noted: bool = False
    """The reply's call is kept for ``record_calls`` (at the unit's end, or earlier once the
    response is known to be complete)."""
    complete: bool = False
    """An end-of-turn record came: no more records of this response will."""
    open_call: int | None = None
    """The call recorded for this response when a watch stopped with it open
    (``note_open_replies``): its usage is set again when the response is noted next."""


@dataclass(slots=True)
class _Reply:
    """A reply kept for ``record_calls`` (not frozen: a frozen dataclass's ``__init__``
    calls ``object.__setattr__`` per field, one per reply)."""

    created_at: float
    seq: int
    head: int | None
    lane: _Lane
    usage: dict[str, Any]
    model: str
    since: int | None
    open_unit: _Unit | None = None
    """The unit of a response noted when a watch stopped (it may still go on)."""


@dataclass
class _Boundary:
    at: int | None
    meta: int
    trigger: str
    pre_tokens: int | None
    created_at: float
    details: dict[str, Any]


@dataclass
class _Lane:
    key: str
    branch_type: str | None
    branch_id: str | None
    agent_name: str
    anchor: int | None = None
    tail: int | None = None
    unit: _Unit | None = None
    uuids: set[str] = field(default_factory=set)
    boundary: _Boundary | None = None

    @property
    def main(self) -> bool:
        return self.branch_type is None


class _Session:
    """The state of one session import: lanes (main and side branches) and id maps."""

    def __init__(self, b: TraceBuilder, ctx: ImportContext) -> None:
        self.b = b
        self.ctx = ctx
        self.nodes = IdMap(b.w.conn)
        self.tool_seq = IdMap(b.w.conn)
        self.tool_names: dict[str, str] = {}
        self.task_info: dict[str, str] = {}
        self.task_prompts: dict[str, str] = {}
        self.agent_tool: dict[str, str] = {}
        self.main = _Lane("main", None, None, "main")
        self.lanes: dict[str, _Lane] = {"main": self.main}
        self.side_of: dict[str, str] = {}
        self.titles: dict[str, str] = {}
        self.last_title = ""
        self.custom_title = ""
        self.first_prompt = ""
        self.compactions: list[tuple[float, int | None, int]] = []
        """Main-path boundaries: time, the logical parent, the index of the event."""
        self.unknown: dict[str, tuple[int, str]] = {}
        self.missing_parents = 0
        self._name = ""
        self._lineno = 0
        self.replies: list[_Reply] = []
        """Replies to record as calls (``record_calls``); none kept once their contexts
        cannot fit (``TraceBuilder.calls_fit``): then only counted."""
        self.reply_count = 0
        self.reply_entries = 0
        self.calls_dropped = False
        self.auto_compact: int | None = None
        """The fewest tokens at which Claude Code compacted on its own (``preTokens``)."""

    @property
    def where(self) -> str:
        """``file:line`` of the record being read (for errors, warnings and image refs:
        made when asked, not for every record)."""
        return f"{self._name}:{self._lineno}" if self._lineno else self._name

    # -- reading ------------------------------------------------------------------------
    def read_file(self, path: Path, name: str, lane: _Lane | None) -> None:
        self.read_records(iter_records(path, self.ctx, name), name, lane)
        for ln in self.lanes.values():
            self._close(ln)
        if self.unknown and self.b.messages == 0 and not self.titles:
            kind, (_, first) = next(iter(self.unknown.items()))
            raise InvalidInputError(f"{first}: not a Claude Code transcript (record type {kind!r})")

    def read_records(
        self, records: Iterable[tuple[int, dict[str, Any]]], name: str, lane: _Lane | None
    ) -> None:
        """Take records in file order (a whole file, or lines appended to it: live capture).
        ``ctx.where`` names the last record read once the records end or one fails."""
        self._name, self._lineno = name, 0
        try:
            self._read(records, lane)
        finally:
            self.ctx.where = self.where

    def _read(self, records: Iterable[tuple[int, dict[str, Any]]], lane: _Lane | None) -> None:
        for lineno, rec in records:
            self._lineno = lineno
            kind = rec.get("type")
            if kind in META_TYPES:  # most records (~6 per tool call): the shortest path
                self._meta(lane or self._lane_of(rec), rec)
                continue
            if not isinstance(kind, str):
                raise InvalidInputError(f"{self.where}: record has no 'type' field")
            if kind in TITLE_TYPES:
                self._title(rec)
                continue
            target = lane or self._lane_of(rec)
            if kind == "user":
                self._user(target, rec)
            elif kind == "assistant":
                self._assistant(target, rec, lineno)
            elif kind == "system":
                self._system(target, rec)
            else:
                count, first = self.unknown.get(kind, (0, self.where))
                self.unknown[kind] = (count + 1, first)
                self._alias(target, rec)

    def write_pending(self) -> None:
        """Write what every lane's unit holds now (live capture: show what arrived). The
        unit stays open, as in a full read: the next lines may hold more records of the same
        API response (a second message of the same reply, and still one call) or results of
        its tool calls. A reply whose end-of-turn record came is noted for its call now; an
        open compaction boundary stays open: its summary may be in the next lines."""
        for ln in self.lanes.values():
            unit = ln.unit
            if unit is not None:
                self._write_out(ln, unit)
                if unit.complete:
                    self._note(ln, unit)

    def open_replies(self) -> int:
        """Written replies whose response may still go on (their calls are not noted)."""
        return sum(
            1
            for ln in self.lanes.values()
            if ln.unit is not None and ln.unit.answer is not None and not ln.unit.noted
        )

    def note_open_replies(self) -> None:
        """Note the calls of ``open_replies`` as they stand (live capture stops: the rest
        of such a response, if it ever comes, joins its message, not its call)."""
        self.write_pending()
        for ln in self.lanes.values():
            if ln.unit is not None:
                self._note(ln, ln.unit, at_stop=True)

    def warnings(self) -> None:
        for kind, (count, first) in self.unknown.items():
            self.ctx.warn(f"{first}: {count} record(s) of unknown type {kind!r} skipped")
        if self.missing_parents:
            self.ctx.warn(
                f"{self.missing_parents} record(s) name a parentUuid not in the file; "
                "chained after the previous record"
            )

    # -- lanes --------------------------------------------------------------------------
    def _lane_of(self, rec: dict[str, Any]) -> _Lane:
        if rec.get("isSidechain") is not True:
            return self.main
        uid = rec.get("uuid")
        agent = rec.get("agentId")
        key = f"agent-{agent}" if agent else self.side_of.get(str(rec.get("parentUuid")), "")
        if not key:
            key = f"sidechain-{str(uid)[:8]}"
        lane = self.lanes.get(key)
        if lane is None:
            lane = self.side_lane(str(agent or key), rec)
            self.lanes[key] = lane
        if isinstance(uid, str):
            self.side_of[uid] = key
        return lane

    def side_lane(self, agent_id: str, first: dict[str, Any]) -> _Lane:
        """A side branch for one subagent (or the compaction summariser)."""
        agent_id = agent_id.removeprefix("agent-")
        if agent_id.startswith("acompact"):
            lane = _Lane(agent_id, "compression", agent_id, "compact")
            found = self._compaction_of(parse_time(first.get("timestamp")))
            lane.anchor = self.main.tail if found is None else found[1]
            if found is not None:
                self.b.annotate_compaction(
                    found[2], "summarizer", {"branch_id": agent_id, "fork_sequence": found[1]}
                )
            return lane
        if self.main.unit is not None:  # the Task call that started it must be written
            self._write_out(self.main, self.main.unit)
        call = self.agent_tool.get(agent_id) or self._prompt_call(first)
        anchor = self.tool_seq.get(call) if call else None
        if anchor is None:
            anchor = self.main.tail
        name = self.task_info.get(call or "", "") or f"agent-{agent_id}"
        return _Lane(agent_id, "subagent", agent_id, name, anchor=anchor)

    def names_agent(self, agent_id: str, first: dict[str, Any]) -> bool:
        """Whether ``side_lane`` would find the ``Task`` call that started this subagent
        (its name, ``subagent_type``) now, among the calls read so far, written or not: a
        live capture waits for it before it opens the lane (the name is kept for good)."""
        agent_id = agent_id.removeprefix("agent-")
        if agent_id.startswith("acompact"):
            return True
        if self.agent_tool.get(agent_id) or self._prompt_call(first):
            return True  # found (a call without a label names nothing, now or later)
        text = text_of(as_dict(first.get("message")).get("content"))
        unit = self.main.unit
        if not text or unit is None:
            return False
        digest = _digest(text)
        return any(  # the reply holding the call may not be written yet
            _digest(prompt) == digest
            for rec in unit.parts
            for block in _blocks(as_dict(rec.get("message")).get("content"))
            if (prompt := _task_prompt(block.get("name"), block.get("input")))
        )

    def _prompt_call(self, rec: dict[str, Any]) -> str | None:
        msg = as_dict(rec.get("message"))
        text = text_of(msg.get("content"))
        return self.task_prompts.get(_digest(text)) if text else None

    def _compaction_of(self, when: float | None) -> tuple[float, int | None, int] | None:
        """The main-path boundary a compaction run that started at ``when`` produced: the
        first one recorded at or after it (else the last)."""
        if not self.compactions:
            return None
        if when is not None:
            for found in self.compactions:
                if found[0] >= when:
                    return found
        return self.compactions[-1]

    def _attach(self, lane: _Lane, rec: dict[str, Any]) -> int | None:
        """The store parent for a new unit starting with ``rec``."""
        parent = rec.get("parentUuid")
        if not lane.main:
            if isinstance(parent, str) and parent in lane.uuids:
                return self.nodes.get(parent)
            return lane.tail if lane.tail is not None else lane.anchor
        if parent is None:
            return lane.tail
        seq = self.nodes.get(str(parent))
        if seq is None:
            self.missing_parents += 1
            return lane.tail
        return seq

    def _register(self, lane: _Lane, unit: _Unit, rec: dict[str, Any]) -> None:
        uid = rec.get("uuid")
        if isinstance(uid, str):
            unit.uuids.append(uid)
            if lane.branch_type is not None:
                lane.uuids.add(uid)

    def _start(self, lane: _Lane, rec: dict[str, Any], group: str | None = None) -> _Unit:
        self._flush(lane)
        if lane.boundary is not None:
            self._settle(lane, None)
        unit = _Unit(self._attach(lane, rec), group)
        lane.unit = unit
        return unit

    # -- record kinds -------------------------------------------------------------------
    def _title(self, rec: dict[str, Any]) -> None:
        if rec.get("type") == "summary":
            text = str(rec.get("summary") or "")
            leaf = rec.get("leafUuid")
            if isinstance(leaf, str) and len(self.titles) < 10_000:
                self.titles[leaf] = text
            self.last_title = text or self.last_title
        else:
            self.custom_title = str(
                rec.get("customTitle") or rec.get("aiTitle") or rec.get("title") or ""
            )

    def _message(self, rec: dict[str, Any]) -> dict[str, Any]:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise InvalidInputError(
                f"{self.where}: {rec.get('type')} record has no 'message' object"
            )
        content = msg.get("content")
        if content is not None and not isinstance(content, str | list):
            raise InvalidInputError(
                f"{self.where}: message.content must be text or a list of blocks"
            )
        return msg

    def _user(self, lane: _Lane, rec: dict[str, Any]) -> None:
        content = self._message(rec).get("content")
        results = _result_ids(content)
        unit = lane.unit
        if results and unit is not None and unit.tool_ids & results:
            unit.items.append(rec)
            self._register(lane, unit, rec)
            return
        if rec.get("isCompactSummary"):
            self._summary(lane, rec)
            return
        if not self.first_prompt and lane.main and not rec.get("isMeta"):
            self.first_prompt = request_title(_typed_text(content))
        unit = self._start(lane, rec)
        unit.items.append(rec)
        self._register(lane, unit, rec)

    def _assistant(self, lane: _Lane, rec: dict[str, Any], lineno: int) -> None:
        msg = self._message(rec)
        group = str(msg.get("id") or rec.get("uuid") or f"line-{lineno}")
        unit = lane.unit
        if unit is None or unit.group != group or not (unit.parts or unit.answer):
            unit = self._start(lane, rec, group)
        unit.parts.append(rec)
        for block in _blocks(msg.get("content")):
            if block.get("type") in ("tool_use", "server_tool_use") and isinstance(
                block.get("id"), str
            ):
                unit.tool_ids.add(block["id"])
                unit.new_tools.append(block["id"])
        self._register(lane, unit, rec)

    def _system(self, lane: _Lane, rec: dict[str, Any]) -> None:
        subtype = rec.get("subtype")
        if subtype == "compact_boundary":
            self._boundary(lane, rec)
        elif subtype == "microcompact_boundary":
            self._microcompact(lane, rec)
        else:
            if subtype in END_OF_TURN and lane.unit is not None:
                lane.unit.complete = True
            self._meta(lane, rec)

    def _meta(self, lane: _Lane, rec: dict[str, Any]) -> None:
        data = rec.get("data")
        if isinstance(data, dict) and data.get("type") == "agent_progress" and data.get("agentId"):
            call = rec.get("parentToolUseID")
            if isinstance(call, str):
                self.agent_tool.setdefault(str(data["agentId"]), call)
        unit = lane.unit
        if unit is None:
            unit = _Unit(self._attach(lane, rec))
            lane.unit = unit
        unit.items.append(rec)
        self._register(lane, unit, rec)

    def _alias(self, lane: _Lane, rec: dict[str, Any]) -> None:
        """An unknown record keeps its place in the uuid tree without becoming a message."""
        uid = rec.get("uuid")
        if isinstance(uid, str):
            if lane.unit is not None:
                self._register(lane, lane.unit, rec)
            else:
                seq = self._attach(lane, rec)
                if seq is not None:
                    self.nodes[uid] = seq

    # -- writing units ------------------------------------------------------------------
    def _close(self, lane: _Lane) -> None:
        self._flush(lane)
        if lane.boundary is not None:
            self._settle(lane, None)

    def _flush(self, lane: _Lane) -> None:
        """End the lane's unit: write what is left of it, note its reply's call."""
        unit = lane.unit
        if unit is None:
            return
        lane.unit = None
        self._write_out(lane, unit)
        if unit.writes > 1 and unit.parent is not None:  # every uuid leads to the end
            self.nodes.update_all(unit.uuids, unit.parent)
        self._note(lane, unit)

    def _write_out(self, lane: _Lane, unit: _Unit) -> None:
        """Write the unit's reply records and items read so far as one chain after what
        was written of it; the unit goes on from the chain's end."""
        seq = unit.parent
        if unit.parts:
            reply = self._reply(lane, unit.parts)
            unit.parts = []
            seq = self.b.add(reply, seq)
            self._answered(unit, reply, seq)
            for call in unit.new_tools:
                self.tool_seq[call] = seq
            unit.new_tools = []
        run: list[dict[str, Any]] = []
        for rec in unit.items:
            if rec.get("type") == "user":
                if run:
                    seq = self.b.add(self._meta_run(lane, run), seq)
                    run = []
                seq = self._emit_user(lane, rec, seq)
            else:
                run.append(rec)
        if run:
            seq = self.b.add(self._meta_run(lane, run), seq)
        unit.items = []
        if seq is not None:
            self.nodes.update_all(unit.uuids[unit.mapped :], seq)
            unit.mapped = len(unit.uuids)
        unit.writes += 1
        unit.parent = seq
        lane.tail = seq

    def _answered(self, unit: _Unit, reply: NewMessage, seq: int) -> None:
        """The reply's records written as message ``seq``: the first message is the call's
        response; the usage and model are the last records' (as ``_reply`` reads them)."""
        model = str(as_dict(reply.metadata).get("model") or "")
        answer = unit.answer
        if answer is None:
            unit.answer = _Answer(unit.parent, seq, reply.created_at or 0.0, reply.usage, model)
            return
        answer.usage = reply.usage or answer.usage
        answer.model = model

    def _note(self, lane: _Lane, unit: _Unit, at_stop: bool = False) -> None:
        """Keep the reply of ``unit``, one API response, for its call (once). ``at_stop``: a
        watch stops and the response may go on; its call is recorded with the usage so far,
        marked (``OPEN_AT_STOP``), and set again each time the response is noted after
        (the output tokens are final only on a response's last record)."""
        answer = unit.answer
        if answer is None:
            return
        if unit.noted:
            if unit.open_call is not None and isinstance(answer.usage, dict):
                usage = open_at_stop(answer.usage) if at_stop else answer.usage
                self.b.set_call_usage(unit.open_call, usage)
                if not at_stop:  # the response is over: its usage is final
                    unit.open_call = None
            return
        unit.noted = True
        if answer.model == SYNTHETIC or not isinstance(answer.usage, dict):
            return  # Claude Code's own placeholder replies (no model was called)
        # A subagent starts afresh (its own branch); a compaction's model call reads the
        # conversation it summarizes: the View at its fork, then its own prompt.
        since = None if lane.main or lane.branch_type == "compression" else lane.anchor
        head = answer.head
        self.reply_count += 1
        self.reply_entries += self.b.context_entries(head)
        if self.reply_entries > self.b.REPLY_CONTEXT_LIMIT:
            self.replies.clear()  # no call will be recorded: keep nothing
            return
        self.replies.append(
            _Reply(
                answer.created_at,
                answer.seq,
                head,
                lane,
                answer.usage,
                answer.model,
                since,
                unit if at_stop else None,
            )
        )

    def note_limits(self) -> None:
        """The limit the records showed so far, in the trace's metadata: Claude Code's
        auto-compact point (the lowest ``preTokens`` of an ``auto`` boundary). A watch
        notes it after each batch, an import once at the end."""
        if not self.auto_compact:
            return
        limits = {"auto_compact_tokens": self.auto_compact}
        meta = self.b.metadata
        if not isinstance(meta, dict) or meta.get("limits") != limits:
            self.b.set_metadata("limits", limits)

    def record_calls(self) -> None:
        """One LLM call per API response (``message.id``) with its usage, for the replies
        noted since the last time (all of them after a full read), in time order."""
        if self.calls_dropped:
            return
        if not self.b.calls_fit(self.reply_count, self.reply_entries):
            self.calls_dropped = True
            return
        replies, self.replies = self.replies, []
        for r in sorted(replies, key=lambda r: (r.created_at, r.seq)):
            call = self.b.reply_call(
                r.head,
                r.seq,
                usage=r.usage if r.open_unit is None else open_at_stop(r.usage),
                model=r.model,
                agent_name=r.lane.agent_name,
                branch_type=r.lane.branch_type,
                since=r.since,
                created_at=r.created_at,
                lane=r.lane.key,
            )
            if r.open_unit is not None:
                r.open_unit.open_call = call.call_index

    def _new(self, lane: _Lane, role: str, content: str, **kw: Any) -> NewMessage:
        return NewMessage(
            role,  # type: ignore[arg-type]
            content,
            branch_type=lane.branch_type,
            branch_id=lane.branch_id,
            agent_name=lane.agent_name,
            **kw,
        )

    def _reply(self, lane: _Lane, records: list[dict[str, Any]]) -> NewMessage:
        """One assistant message from the streamed records of one API response."""
        texts: list[str] = []
        thinking: list[str] = []
        parts: list[Any] = []
        calls: list[ToolCall] = []
        usage: Any = None
        for rec in records:
            msg = as_dict(rec.get("message"))
            usage = msg.get("usage") or usage
            content = msg.get("content")
            if isinstance(content, str):
                texts.append(content)
                parts.append({"type": "text", "text": content})
                continue
            for block in _blocks(content):
                kind = block.get("type")
                if kind in ("tool_use", "server_tool_use"):
                    calls.append(self._call(block))
                elif kind in ("thinking", "redacted_thinking"):
                    thinking.append(str(block.get("thinking") or ""))
                    parts.append(block)
                else:
                    self._keep(block, texts, parts)
        first, last = records[0], as_dict(records[-1].get("message"))
        text = "\n\n".join(t.strip() for t in texts if t.strip())
        kind = "message"
        if not text and not calls and thinking:
            kind, text = "thinking", "\n\n".join(t for t in thinking if t)
        keep_parts = any(as_dict(p).get("type") != "text" for p in parts)
        meta: dict[str, Any] = {
            "uuid": first.get("uuid"),
            "message_id": last.get("id"),
            "request_id": first.get("requestId"),
            "model": last.get("model"),
            "stop_reason": last.get("stop_reason"),
        }
        if len(records) > 1:
            meta["records"] = len(records)
        if first.get("isApiErrorMessage"):
            meta["api_error"] = True
        return self._new(
            lane,
            "assistant",
            text,
            parts=tuple(parts) if keep_parts else None,
            tool_calls=tuple(calls),
            kind=kind,
            usage=usage,
            created_at=parse_time(first.get("timestamp")),
            metadata={k: v for k, v in meta.items() if v is not None},
        )

    def _call(self, block: dict[str, Any]) -> ToolCall:
        call_id = str(block.get("id") or "")
        name = str(block.get("name") or "")
        args = block.get("input") if block.get("input") is not None else {}
        if len(self.tool_names) < 100_000:
            self.tool_names[call_id] = name
        if name in TASK_TOOLS and isinstance(args, dict):
            label = args.get("subagent_type") or args.get("description")
            if label:
                self.task_info[call_id] = str(label)
            prompt = _task_prompt(name, args)
            if prompt:
                self.task_prompts[_digest(prompt)] = call_id
        return ToolCall(call_id, name, dumps(args))

    def _image(self, block: dict[str, Any]) -> dict[str, Any]:
        src = as_dict(block.get("source"))
        data = src.get("data") or src.get("url") or ""
        part = image_ref(
            self.b, str(data), str(src.get("media_type") or ""), self.where, self.b.next_sequence
        )
        return part

    def _keep(self, block: dict[str, Any], texts: list[str], parts: list[Any]) -> None:
        """A block of a reply or a user message that is neither a call, a result nor a
        thought: kept as a part (an image as a ref), its text read if it is text."""
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        parts.append(self._image(block) if kind == "image" else block)

    def _emit_user(self, lane: _Lane, rec: dict[str, Any], parent: int | None) -> int | None:
        msg = as_dict(rec.get("message"))
        content = msg.get("content")
        when = parse_time(rec.get("timestamp"))
        base = {"uuid": rec.get("uuid")}
        seq = parent
        if isinstance(content, str):
            return self.b.add(self._user_text(lane, rec, content, None, when, base), seq)
        texts: list[str] = []
        parts: list[Any] = []
        structured = rec.get("toolUseResult")
        answers = False  # a result naming its call (``_result_ids`` of the content)
        for block in _blocks(content):
            kind = block.get("type")
            if kind == "tool_result":
                seq = self.b.add(self._tool_result(lane, block, structured, when, base), seq)
                structured = None
                answers = answers or bool(block.get("tool_use_id"))
            else:
                self._keep(block, texts, parts)
        if parts or not answers:
            keep = tuple(parts) if any(as_dict(p).get("type") != "text" for p in parts) else None
            text = "\n".join(t for t in texts if t)
            seq = self.b.add(self._user_text(lane, rec, text, keep, when, base), seq)
        return seq

    def _user_text(
        self,
        lane: _Lane,
        rec: dict[str, Any],
        text: str,
        parts: tuple[Any, ...] | None,
        when: float | None,
        base: dict[str, Any],
    ) -> NewMessage:
        kind = "injected_context" if rec.get("isMeta") else "message"
        meta = dict(base, is_meta=True) if rec.get("isMeta") else base
        return self._new(lane, "user", text, parts=parts, kind=kind, created_at=when, metadata=meta)

    def _tool_result(
        self,
        lane: _Lane,
        block: dict[str, Any],
        structured: Any,
        when: float | None,
        base: dict[str, Any],
    ) -> NewMessage:
        call_id = str(block.get("tool_use_id") or "")
        content = block.get("content")
        parts: list[Any] = []
        if isinstance(content, list):
            for inner in content:
                if isinstance(inner, dict) and inner.get("type") == "image":
                    parts.append(self._image(inner))
                else:
                    parts.append(inner)
        meta = dict(base)
        if block.get("is_error"):
            meta["is_error"] = True
        if structured is not None:
            meta["tool_use_result"] = structured
            agent = as_dict(structured).get("agentId")
            if agent:
                self.agent_tool.setdefault(str(agent), call_id)
        has_image = any(as_dict(p).get("type") == "image" for p in parts)
        return self._new(
            lane,
            "tool",
            text_of(content),
            parts=tuple(parts) if has_image else None,
            tool_call_id=call_id,
            name=self.tool_names.pop(call_id, None),
            created_at=when,
            metadata=meta,
        )

    def _meta_message(self, lane: _Lane, rec: dict[str, Any]) -> NewMessage:
        return self._meta_run(lane, [rec])

    def _meta_run(self, lane: _Lane, records: list[dict[str, Any]]) -> NewMessage:
        """One ``meta`` message for records in a row that are not conversation (progress,
        hooks, snapshots, system notes): shown as one dim line, never sent. Its metadata is
        the record without the session keys, or for several ``{"uuid": <last>, "records":
        [...]}``; a Claude Code turn logs ~6 such records per tool call."""
        labels: list[str] = []
        size = 0
        for rec in records:  # labels until the line is full (the summary keeps 500 chars)
            if size > 500:
                break
            get = rec.get
            data = get("data")
            if not isinstance(data, dict):
                data = _NO_DATA
            # "label detail text", the empty ones left out (words joined as they come)
            line = str(get("subtype") or data.get("type") or get("type"))
            detail = data.get("hookName") or data.get("taskDescription") or get("operation")
            if detail:
                line = f"{line} {detail}" if line else str(detail)
            text = get("content")
            if text and isinstance(text, str):
                line = f"{line} {text}" if line else text
            labels.append(line)
            size += len(line) + 3
        kept = list(map(_without_session_keys, records))
        first = records[0]
        when = parse_time(first.get("timestamp") or as_dict(first.get("snapshot")).get("timestamp"))
        if len(records) == 1:
            summary, metadata = labels[0], kept[0]
        else:
            summary = f"{len(records)} records: " + " · ".join(labels)
            # the run's first and last record with a time of its own count into the
            # trace's span (SessionStart hooks before the first request, the last
            # turn's system records); a snapshot's time is its message's
            own = next((r["timestamp"] for r in records if r.get("timestamp")), None)
            self.b.saw_time(parse_time(own))
            self.b.saw_time(parse_time(records[-1].get("timestamp")))
            metadata = {"uuid": records[-1].get("uuid"), "records": kept}
        return self._new(
            lane, "system", summary[:500], kind="meta", created_at=when, metadata=metadata
        )

    # -- compaction ---------------------------------------------------------------------
    def _boundary(self, lane: _Lane, rec: dict[str, Any]) -> None:
        self._close(lane)
        logical = rec.get("logicalParentUuid")
        at = self.nodes.get(logical) if isinstance(logical, str) else None
        if at is None:
            at = lane.tail
        cm = as_dict(rec.get("compactMetadata"))
        trigger = str(cm.get("trigger") or "auto")
        pre = cm.get("preTokens")
        pre_tokens = (
            int(pre) if isinstance(pre, int | float) and not isinstance(pre, bool) else None
        )
        note = f"Conversation compacted ({trigger}" + (
            f", {pre_tokens} tokens before)" if pre_tokens else ")"
        )
        meta = self._meta_message(lane, rec)
        mseq = self.b.add(
            self._new(
                lane,
                "system",
                note,
                kind="meta",
                created_at=meta.created_at,
                metadata=meta.metadata,
            ),
            at,
        )
        self._placed(lane, rec, mseq)
        when = parse_time(rec.get("timestamp")) or 0.0
        details = {"uuid": rec.get("uuid"), **cm}
        lane.boundary = _Boundary(at, mseq, trigger, pre_tokens, when, details)

    def _placed(self, lane: _Lane, rec: dict[str, Any], seq: int) -> None:
        """A compaction record written as its own message at ``seq``: its uuid leads there
        (a side lane also claims it) and the lane continues from it."""
        uid = rec.get("uuid")
        if isinstance(uid, str):
            self.nodes[uid] = seq
            if not lane.main:
                lane.uuids.add(uid)
        lane.tail = seq

    def _summary(self, lane: _Lane, rec: dict[str, Any]) -> None:
        """The ``isCompactSummary`` message: what the model sees after the boundary."""
        self._flush(lane)
        bd = lane.boundary
        lane.boundary = None
        parent = bd.meta if bd is not None else lane.tail
        before = bd.at if bd is not None else lane.tail
        content = as_dict(rec.get("message")).get("content")
        seq = self.b.add(
            self._new(
                lane,
                "user",
                text_of(content),
                kind="summary",
                created_at=parse_time(rec.get("timestamp")),
                metadata={"uuid": rec.get("uuid"), "is_compact_summary": True},
            ),
            parent,
        )
        self._placed(lane, rec, seq)
        if bd is None:
            self.ctx.warn(f"{self.where}: compact summary without a compact_boundary record")
            bd = _Boundary(
                before, seq, "unknown", None, parse_time(rec.get("timestamp")) or 0.0, {}
            )
        self._record(lane, bd, (ContextItem(seq),), seq, before)

    def _settle(self, lane: _Lane, summary: int | None) -> None:
        """A boundary whose summary never came: the model saw nothing of what went before."""
        bd = lane.boundary
        lane.boundary = None
        if bd is None:
            return
        self.ctx.warn(f"{self.where}: compact_boundary without a following compact summary")
        self._record(lane, bd, (), summary, bd.at)

    def _record(
        self,
        lane: _Lane,
        bd: _Boundary,
        after: tuple[ContextItem, ...],
        summary: int | None,
        before: int | None,
    ) -> None:
        """The compaction event, anchored at its summary (the last message the boundary
        wrote) when there is one; ``before``: where the context it replaced ended."""
        self.b.compaction(
            summary if summary is not None else bd.at,
            after,
            before_at=before,
            trigger=bd.trigger,
            summary_sequence=summary,
            tokens_before=bd.pre_tokens,
            details={"source": "compact_boundary", **bd.details},
            created_at=bd.created_at,
        )
        if lane.main:
            self.compactions.append((bd.created_at, before, self.b.compactions - 1))
        if lane.main and bd.trigger == "auto" and bd.pre_tokens:
            self.auto_compact = min(self.auto_compact or bd.pre_tokens, bd.pre_tokens)

    def _microcompact(self, lane: _Lane, rec: dict[str, Any]) -> None:
        """Old tool results cleared in place: the same messages, some shown as a marker."""
        self._close(lane)
        at = self._attach(lane, rec)
        mseq = self.b.add(self._meta_message(lane, rec), at)
        uid = rec.get("uuid")
        if isinstance(uid, str):
            self.nodes[uid] = mseq
        lane.tail = mseq
        md = as_dict(rec.get("microcompactMetadata"))
        cleared = {str(x) for x in md.get("compactedToolIds") or [] if x}
        after: list[ContextItem] = []
        if at is not None:
            self.b.flush()
            self.b.w.flush()
            items, _ = current_items(self.b.w.read, self.b.trace_id, at)
            msgs = self.b.w.read.messages(
                self.b.trace_id, [i.sequence for i in items if i.sequence is not None]
            )
            for item in items:
                m = msgs.get(item.sequence) if item.sequence is not None else None
                if m is not None and m.role == "tool" and m.tool_call_id in cleared:
                    after.append(ContextItem(item.sequence, content=CLEARED))
                else:
                    after.append(item)
        pre = md.get("preTokens")
        self.b.compaction(
            at,
            after,
            trigger=str(md.get("trigger") or "auto"),
            tokens_before=int(pre) if isinstance(pre, int) and not isinstance(pre, bool) else None,
            details={"source": "microcompact_boundary", **md},
            created_at=parse_time(rec.get("timestamp")) or 0.0,
        )

    def title(self) -> str:
        if self.custom_title:
            return self.custom_title
        for leaf, text in self.titles.items():
            if self.nodes.get(leaf) is not None and text:
                return text
        return self.last_title or self.first_prompt

    def close(self) -> None:
        self.nodes.close()
        self.tool_seq.close()


_SESSION_KEYS = frozenset(
    {"cwd", "sessionId", "version", "gitBranch", "userType", "slug", "isSidechain", "parentUuid"}
)


_NO_DATA: dict[str, Any] = {}


def _without_session_keys(rec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``rec`` without ``_SESSION_KEYS``, the other keys in their order: a C
    copy and one ``pop`` per key, not a comprehension over every key nor a loop
    (~1,400 records a session)."""
    kept = rec.copy()
    pop = kept.pop
    pop("cwd", None), pop("sessionId", None), pop("version", None), pop("gitBranch", None)
    pop("userType", None), pop("slug", None), pop("isSidechain", None)
    pop("parentUuid", None)
    return kept


def _task_prompt(name: Any, args: Any) -> str | None:
    """The prompt of a ``Task`` call (what its subagent's first message says), if any."""
    if name not in TASK_TOOLS or not isinstance(args, dict):
        return None
    prompt = args.get("prompt")
    return prompt if isinstance(prompt, str) and prompt else None


def _digest(text: str) -> str:
    return hashlib.sha1(text.strip().encode("utf-8", "replace")).hexdigest()


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _result_ids(content: Any) -> set[str]:
    return {
        str(b.get("tool_use_id"))
        for b in _blocks(content)
        if b.get("type") == "tool_result" and b.get("tool_use_id")
    }


def _session_info(path: Path) -> tuple[dict[str, Any], float | None]:
    head = first_record(path) or {}
    keys = {
        "sessionId": "session_id",
        "cwd": "cwd",
        "version": "version",
        "gitBranch": "git_branch",
    }
    meta = {new: head[old] for old, new in keys.items() if old in head}
    return meta, parse_time(head.get("timestamp"))


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    """Import one session (its file plus its subagent files) as one trace."""
    main = unit.main
    meta, created = _session_info(main)
    meta["files"] = [str(p) for p in unit.files]
    b = TraceBuilder(w, ctx, FORMAT, str(unit.path), main.stem, meta, created)
    b.json_from_reader = True  # every value written comes from iter_records
    session = _Session(b, ctx)
    try:
        standalone = main.name.startswith("agent-")
        if standalone:
            head = first_record(main) or {}
            lane = session.side_lane(str(head.get("agentId") or main.stem), head)
            session.lanes[lane.key] = lane
            session.read_file(main, str(main), lane)
        else:
            session.read_file(main, str(main), None)
        for extra in unit.files[1:]:
            head = first_record(extra) or {}
            agent = str(head.get("agentId") or extra.stem)
            lane = session.side_lane(agent, head)
            session.lanes[f"file-{extra}"] = lane
            session.read_file(extra, str(extra), lane)
        session.record_calls()
        session.note_limits()
        session.warnings()
        b.set_title(session.title() or b.first_text())
        return [b.finish()]
    finally:
        session.close()


def _typed_text(content: Any) -> str:
    """The text a user typed: a string, or the ``text`` blocks of a list (tool results,
    images and other blocks are not typed)."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(b.get("text") or "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
