"""Writes inside one transaction: appending messages, moving the head, recording events.

A ``Writer`` lives for exactly one transaction (``Store.write()``). Sequence numbers, the
head and the line index are kept in memory for the transaction and written back once at
commit, so a bulk import of a long trace costs one INSERT per message and nothing more.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from operator import itemgetter
from typing import Any, TypeVar

import orjson
from sqlalchemy import (
    JSON,
    Column,
    Connection,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError as SAIntegrityError

from core.errors import CheckpointConflict, InvalidInputError, NotFoundError
from core.records import ROLES as MESSAGE_ROLES
from core.records import (
    Checkpoint,
    CompactionEvent,
    ContextItem,
    ContextRef,
    GoalEvent,
    Grant,
    LlmCall,
    Message,
    NewMessage,
    SkillInjection,
    ToolCall,
    Trace,
    encode_items,
)
from core.store import schema as t
from core.store.message_fields import COLUMNS, JSON_COLUMNS, appended, new_row, row_of
from core.store.objects import ObjectStore
from core.store.paths import LineInfo
from core.store.reader import Reader
from core.store.rows import record_from, row_values
from core.tokens import count_message

ROLES = frozenset(MESSAGE_ROLES)
R = TypeVar("R", LlmCall, CompactionEvent, Grant)


class _Head:
    def __repr__(self) -> str:
        return "HEAD"


HEAD: Any = _Head()
"""Default parent: the trace's current head."""


@dataclass
class _TraceState:
    trace_id: str
    next_sequence: int
    next_line: int
    head: int | None
    message_count: int
    lines: dict[int, LineInfo]
    pos: dict[int, tuple[int, int]] = field(default_factory=dict)
    dirty: bool = False
    metadata_due: bool = False
    """The metadata (``Writer._metadata``) goes with the counters at the next flush."""
    #: Lines begun since the last flush (rows to insert) and lines whose tip moved (rows
    #: to update, unless new).
    new_lines: set[int] = field(default_factory=set)
    moved_lines: set[int] = field(default_factory=set)


#: Positions (line, depth) cached per trace during a transaction; older ones are re-read
#: from ``messages`` on demand, so a bulk import's memory does not grow with the trace.
POSITION_CACHE = 8192


def _remember(st: _TraceState, sequence: int, position: tuple[int, int]) -> None:
    pos = st.pos
    pos[sequence] = position
    if len(pos) > POSITION_CACHE:
        for key in list(itertools.islice(pos, len(pos) // 2)):
            del pos[key]


class Writer:
    """All writes of one transaction. Obtain through ``Store.write()``."""

    def __init__(self, conn: Connection, objects: ObjectStore) -> None:
        self.conn = conn
        self.read = Reader(conn)
        self.objects = objects
        self._states: dict[str, _TraceState] = {}
        self._calls: list[dict[str, Any]] = []
        self._metadata: dict[str, Any] = {}
        """Metadata of the traces written in this transaction (``trace_metadata``)."""

    # -- traces -----------------------------------------------------------------------
    def create_trace(
        self,
        title: str = "",
        source: str = "ctxlens",
        metadata: Any = None,
        trace_id: str | None = None,
        created_at: float | None = None,
    ) -> Trace:
        tid = trace_id or os.urandom(8).hex()  # 16 random hex digits, as uuid4's, cheaper
        now = time.time() if created_at is None else created_at
        row = {
            "id": tid,
            "title": title,
            "source": source,
            "created_at": now,
            "head_sequence": None,
            "next_sequence": 0,
            "next_line": 0,
            "message_count": 0,
            "metadata": metadata,
        }
        if self.conn.dialect.name == "sqlite":
            # Through the driver, metadata by orjson: SQLAlchemy's statement machinery and
            # json.dumps cost an Inspect import a fifth of its CPU (one trace per sample).
            row["metadata"] = _json_text(metadata)
            self.conn.exec_driver_sql(_SQLITE_INSERT_TRACE, tuple(row[c] for c in _TRACE_COLUMNS))
        else:
            self.conn.execute(_INSERT_TRACE, row)
        self._states[tid] = _TraceState(tid, 0, 0, None, 0, {})
        self._metadata[tid] = metadata
        return Trace(tid, title, source, now, None, 0, metadata)

    def set_title(self, trace_id: str, title: str) -> None:
        self.conn.execute(_SET_TITLE, {"tid": trace_id, "title": title})

    def set_created_at(self, trace_id: str, created_at: float) -> None:
        self.conn.execute(_SET_CREATED, {"tid": trace_id, "created_at": created_at})

    def trace_metadata(self, trace_id: str) -> Any:
        """The trace's metadata as this transaction has it (as written here, else read)."""
        if trace_id in self._metadata:
            return self._metadata[trace_id]
        return self.conn.execute(_TRACE_METADATA, {"tid": trace_id}).scalar()

    def update_trace_metadata(self, trace_id: str, metadata: Any) -> None:
        self.conn.execute(_SET_METADATA, {"tid": trace_id, "metadata": metadata})
        self._metadata[trace_id] = metadata
        st = self._states.get(trace_id)
        if st is not None:  # written now: nothing left for the flush
            st.metadata_due = False

    def queue_trace_metadata(self, trace_id: str, metadata: Any) -> None:
        """``update_trace_metadata`` written with the trace's counters at the next ``flush``
        (the commit): the row is updated once, not twice (an Inspect import ends each
        sample's trace with its metadata: an update of its own cost ~60 µs a sample).
        ``trace_metadata`` has it at once; a query of the row sees it after the flush."""
        st = self._state(trace_id)
        self._metadata[trace_id] = metadata
        st.metadata_due = st.dirty = True

    def _state(self, trace_id: str) -> _TraceState:
        st = self._states.get(trace_id)
        if st is not None:
            return st
        row = self.conn.execute(_TRACE_FOR_UPDATE, {"tid": trace_id}).first()
        if row is None:
            raise NotFoundError(f"trace {trace_id!r} not found")
        lines = {
            r.line: record_from(LineInfo, r._mapping)
            for r in self.conn.execute(_TRACE_LINES, {"tid": trace_id})
        }
        st = _TraceState(
            trace_id,
            row.next_sequence,
            row.next_line,
            row.head_sequence,
            row.message_count,
            lines,
        )
        self._states[trace_id] = st
        return st

    def _position(self, st: _TraceState, sequence: int) -> tuple[int, int]:
        p = st.pos.get(sequence)
        if p is None:
            row = self.conn.execute(_POSITION, {"tid": st.trace_id, "seq": sequence}).first()
            if row is None:
                raise NotFoundError(f"message {sequence} not found in trace {st.trace_id!r}")
            p = (int(row.line), int(row.depth))
            _remember(st, sequence, p)
        return p

    def _place(
        self,
        st: _TraceState,
        parent: int | None,
        sequence: int,
        branch_type: str | None,
        branch_id: str | None,
    ) -> tuple[int, int]:
        """Choose the line and depth of a new message with ``parent``."""
        if parent is None:
            depth, parent_line = 0, None
        else:
            pl, pd = self._position(st, parent)
            li = st.lines[pl]
            depth, parent_line = pd + 1, pl
            if (
                li.tip_sequence == parent
                and li.branch_type == branch_type
                and li.branch_id == branch_id
            ):
                li.tip_sequence, li.tip_depth = sequence, depth
                st.moved_lines.add(pl)
                _remember(st, sequence, (pl, depth))
                return pl, depth
        line = st.next_line
        st.next_line += 1
        st.lines[line] = LineInfo(
            line, parent_line, depth, sequence, sequence, depth, branch_type, branch_id
        )
        st.new_lines.add(line)
        _remember(st, sequence, (line, depth))
        return line, depth

    # -- messages ---------------------------------------------------------------------
    def append(
        self,
        trace_id: str,
        messages: Sequence[NewMessage],
        parent: int | None = HEAD,
        move_head: bool | None = None,
    ) -> list[Message]:
        """Append a chain: the first message's parent is ``parent``, each next one's the
        previous. The head follows when the chain extends the main line from the head
        (or when ``move_head`` says so)."""
        if not messages:
            return []
        st = self._state(trace_id)
        start_parent = st.head if parent is HEAD else parent
        p = start_parent
        now = time.time()
        out: list[Message] = []
        rows: list[list[Any]] = []
        for nm in messages:
            if nm.role not in ROLES:
                raise InvalidInputError(f"message role {nm.role!r} is not one of {sorted(ROLES)}")
            seq = st.next_sequence
            st.next_sequence += 1
            line, depth = self._place(st, p, seq, nm.branch_type, nm.branch_id)
            row, record = appended((trace_id, seq, p, line, depth), nm, _tokens(nm), now)
            rows.append(row)
            out.append(record)
            p = seq
        self._insert_rows(rows, _RUN_JSON)
        st.message_count += len(out)
        if move_head is None:
            move_head = start_parent == st.head and all(m.branch_type is None for m in out)
        if move_head:
            st.head = out[-1].sequence
        st.dirty = True
        return out

    def append_counted(
        self,
        trace_id: str,
        messages: Sequence[NewMessage],
        token_counts: Sequence[int],
        parent: int | None,
        finite_json: bool = False,
        undated_at: float | None = None,
    ) -> int:
        """Bulk ``append`` for importers: a chain from ``parent`` whose token counts are
        given, written without building ``Message`` records; the head does not move.
        ``finite_json``: the caller knows no value holds NaN or an infinity (read by orjson,
        which refuses both), so JSON columns skip the check for them. ``undated_at``: the
        ``created_at`` of a message without one (default: now); the importer records which
        those are (``core/undated.py``).
        Returns the first sequence written."""
        st = self._state(trace_id)
        first = st.next_sequence
        if not messages:
            return first
        if len(token_counts) != len(messages):
            raise InvalidInputError("one token count per message is needed")
        now = time.time() if undated_at is None else undated_at
        rows: list[list[Any]] = []
        p = parent
        for nm, tokens in zip(messages, token_counts, strict=True):
            if nm.role not in ROLES:
                raise InvalidInputError(f"message role {nm.role!r} is not one of {sorted(ROLES)}")
            seq = st.next_sequence
            st.next_sequence += 1
            line, depth = self._place(st, p, seq, nm.branch_type, nm.branch_id)
            rows.append(new_row((trace_id, seq, p, line, depth), nm, tokens, now))
            p = seq
        self._insert_rows(rows, _FINITE_JSON if finite_json else _IMPORT_JSON)
        st.message_count += len(rows)
        st.dirty = True
        return first

    def next_sequence(self, trace_id: str) -> int:
        """The sequence the next appended message of ``trace_id`` will get.

        Lets callers derive ids that are unique per trace and stable on replay (synthetic
        tool-call ids) before appending.
        """
        return self._state(trace_id).next_sequence

    def head(self, trace_id: str) -> int | None:
        """The head as of this transaction (including appends not yet committed)."""
        return self._state(trace_id).head

    def restore_message(self, msg: Message) -> Message:
        """Insert a message with its own sequence and parent (lossless re-import)."""
        return self.restore_messages([msg])[0]

    def restore_messages(self, msgs: Sequence[Message]) -> list[Message]:
        """``restore_message`` for many, parents first, as one multi-row INSERT (a server
        database pays one round trip per batch instead of one per message)."""
        out: list[Message] = []
        for msg in msgs:
            st = self._state(msg.trace_id)
            line, depth = self._place(
                st, msg.parent_sequence, msg.sequence, msg.branch_type, msg.branch_id
            )
            out.append(_replace_position(msg, line, depth))
            st.next_sequence = max(st.next_sequence, msg.sequence + 1)
            st.message_count += 1
            st.dirty = True
        if out:
            self._insert_rows([row_of(m) for m in out], _RUN_JSON)
        return out

    def _insert_rows(self, rows: list[list[Any]], encoders: _JsonText) -> None:
        """Insert rows in ``COLUMNS`` order (JSON columns still as values). On SQLite
        straight through the driver (5× faster than Core's per-row parameter processing,
        which dominated long imports), JSON columns encoded by ``encoders``,
        ``_ROWS_PER_INSERT`` rows per statement (one statement step, which lets go of the
        GIL, per 64 rows instead of per row), the rest one row per step: two statement
        shapes, prepared once per connection."""
        if self.conn.dialect.name != "sqlite":
            self.conn.execute(insert(t.messages), [dict(zip(COLUMNS, r)) for r in rows])
            return
        for i, encode in encoders:  # the rows are this call's own: encoded in place
            for r in rows:
                if r[i] is not None:  # NULL stays NULL (most parts, usage, metadata)
                    r[i] = encode(r[i])
        full = len(rows) - len(rows) % _ROWS_PER_INSERT
        for start in range(0, full, _ROWS_PER_INSERT):
            chunk = rows[start : start + _ROWS_PER_INSERT]
            self.conn.exec_driver_sql(
                _SQLITE_INSERT_MANY, tuple(itertools.chain.from_iterable(chunk))
            )
        if full < len(rows):
            self.conn.exec_driver_sql(_SQLITE_INSERT, [tuple(r) for r in rows[full:]])

    def set_head(self, trace_id: str, sequence: int | None) -> None:
        st = self._state(trace_id)
        if sequence is not None:
            self._position(st, sequence)
        st.head = sequence
        st.dirty = True

    def rewind(self, trace_id: str, to_sequence: int) -> tuple[int | None, int]:
        """Move the head back to a main-line message (STORE-4). Nothing is deleted.

        Returns ``(old_head, new_head)``; the move is recorded as a run event.
        """
        st = self._state(trace_id)
        target = self.read.message(trace_id, to_sequence)
        if target.branch_type is not None:
            raise InvalidInputError(
                f"message {to_sequence} is on a {target.branch_type} side branch; "
                "rewind to a main-line message"
            )
        old = st.head
        st.head = to_sequence
        st.dirty = True
        self.add_run_event(trace_id, "rewind", to_sequence, {"from": old, "to": to_sequence})
        self._end_later_grants(trace_id, to_sequence)
        return old, to_sequence

    def _end_later_grants(self, trace_id: str, to_sequence: int) -> int:
        """DEL-3: the held grants ``trace_id`` made after ``to_sequence`` end with the reason
        ``rewind to N`` (the rule of ``core/delegation/snapshots.py:dropped_by_rewind``, in
        one statement here so every rewind applies it); how many ended."""
        c = t.delegation_grants.c
        done = self.conn.execute(
            update(t.delegation_grants)
            .where(
                c.granted_by == trace_id,
                c.granted_at_sequence > to_sequence,
                c.dropped_reason.is_(None),
            )
            .values(dropped_reason=f"rewind to {to_sequence}")
        )
        return int(done.rowcount or 0)

    def flush(self) -> None:
        """Write back sequence counters, heads, the line index and the queued LLM calls
        (called at commit). Each kind of row goes in one executemany for all traces."""
        self.flush_calls()
        states: list[dict[str, Any]] = []
        with_metadata: list[dict[str, Any]] = []
        new_lines: list[dict[str, Any]] = []
        tips: list[dict[str, Any]] = []
        for st in self._states.values():
            if not st.dirty:
                continue
            row = {
                "tid": st.trace_id,
                "next_sequence": st.next_sequence,
                "next_line": st.next_line,
                "head_sequence": st.head,
                "message_count": st.message_count,
            }
            if st.metadata_due:
                row["metadata"] = self._metadata[st.trace_id]
                with_metadata.append(row)
                st.metadata_due = False
            else:
                states.append(row)
            new_lines.extend(_line_row(st.trace_id, st.lines[n]) for n in sorted(st.new_lines))
            tips.extend(
                {"tid": st.trace_id, "ln": n, "tip_sequence": st.lines[n].tip_sequence,
                 "tip_depth": st.lines[n].tip_depth}
                for n in sorted(st.moved_lines - st.new_lines)
            )  # fmt: skip
            st.new_lines.clear()
            st.moved_lines.clear()
            st.dirty = False
        if states:
            self.conn.execute(_SET_STATE, states)
        if with_metadata and self.conn.dialect.name == "sqlite":
            self.conn.exec_driver_sql(
                _SQLITE_SET_STATE_METADATA,
                [(*(r[c] for c in _STATE_COLUMNS), _json_text(r["metadata"]), r["tid"])
                 for r in with_metadata],
            )  # fmt: skip
        elif with_metadata:
            self.conn.execute(_SET_STATE, with_metadata)
        if new_lines:
            self.conn.execute(_INSERT_LINE, new_lines)
        if tips:
            self.conn.execute(_SET_LINE_TIP, tips)

    # -- LLM calls and compactions -------------------------------------------------------
    def next_call_index(self, trace_id: str) -> int:
        return self.read.llm_call_count(trace_id)

    def record_llm_call(self, call: LlmCall, encoded: list[Any] | None = None) -> LlmCall:
        """``encoded``: the context already as ``encode_items`` gives it (a caller that keeps
        it incrementally saves re-encoding a long context on every call)."""
        self.flush_calls()
        res = self.conn.execute(_INSERT_CALL, _call_values(call, encoded))
        return _with_id(call, res.inserted_primary_key)

    def queue_llm_call(self, call: LlmCall, encoded: list[Any] | None = None) -> None:
        """Record ``call`` with the next ``flush``: an import's calls go in one executemany
        (a statement built per call cost the Inspect import more than reading the log).
        ``encoded``: as in ``record_llm_call``."""
        self._calls.append(_call_values(call, encoded))

    def flush_calls(self) -> None:
        """Write the queued calls; on SQLite through the driver, JSON columns by orjson
        (SQLAlchemy's ``json.dumps`` of every context cost an import as much as its rows)."""
        if not self._calls:
            return
        calls, self._calls = self._calls, []
        if self.conn.dialect.name != "sqlite":
            self.conn.execute(_INSERT_CALL, calls)
            return
        rows = [list(_CALL_ROW(c)) for c in calls]  # the values at C speed, then the JSON
        for i in _CALL_JSON_AT:
            for r in rows:
                if r[i] is not None:
                    r[i] = _json_text(r[i])
        self.conn.exec_driver_sql(_SQLITE_INSERT_CALL, [tuple(r) for r in rows])

    def set_call_usage(self, trace_id: str, call_index: int, usage: Any) -> None:
        """A live capture read the rest of a response it had recorded when it stopped: the
        call's usage becomes what the response's last record says. The trace's usage sums
        (``trace_totals``, which fold calls as they are appended) are dropped, so
        ``core/cost/totals.py:catch_up`` sums its calls again."""
        self.flush_calls()
        c = t.llm_calls.c
        self.conn.execute(
            update(t.llm_calls)
            .where(c.trace_id == trace_id, c.call_index == call_index)
            .values(usage=usage)
        )
        self.conn.execute(delete(t.trace_totals).where(t.trace_totals.c.trace_id == trace_id))

    def set_call_response(
        self, trace_id: str, call_index: int, sequence: int, created_at: float
    ) -> None:
        """A live capture read the response of a call it had recorded when it stopped, before
        the response's first item came (Codex logs the usage first): the call links it, and
        takes its time as an import gives it (the response's first item's)."""
        self.flush_calls()
        c = t.llm_calls.c
        self.conn.execute(
            update(t.llm_calls)
            .where(c.trace_id == trace_id, c.call_index == call_index)
            .values(response_sequence=sequence, created_at=created_at)
        )

    def set_compaction_after(self, event_id: int, tokens_after: int, details: Any) -> None:
        """An import's boundary learns its recorded tokens after (the next call's prompt)."""
        self.conn.execute(
            _SET_COMPACTION, {"cid": event_id, "tokens_after": tokens_after, "details": details}
        )

    def set_compaction_details(self, event_id: int, details: Any) -> None:
        """An import's boundary learns a link (the compaction run that wrote its summary)."""
        self.conn.execute(_SET_COMPACTION, {"cid": event_id, "details": details})

    def record_compaction(self, event: CompactionEvent) -> CompactionEvent:
        values = row_values(
            event,
            t.compactions,
            removed=list(event.removed),
            context_after=encode_items(event.context_after),
            created_at=event.created_at or time.time(),
        )
        res = self.conn.execute(_INSERT_COMPACTION, values)
        return _with_id(event, res.inserted_primary_key)

    # -- goals, tasks, skills, refs, grants -----------------------------------------------
    def add_goal_event(self, event: GoalEvent) -> None:
        self.conn.execute(insert(t.goal_events).values(**row_values(event, t.goal_events)))

    def set_tasks(self, trace_id: str, sequence: int, tasks: Iterable[dict[str, Any]]) -> None:
        """Snapshot of the task list as of message ``sequence`` (todo_write, INJ-4)."""
        values = [
            {
                "trace_id": trace_id,
                "sequence": sequence,
                "task_id": str(task["id"]),
                "content": str(task.get("content", "")),
                "status": str(task.get("status", "pending")),
                "blocked_by": task.get("blocked_by"),
                "owner": task.get("owner"),
            }
            for task in tasks
        ]
        if values:
            self.conn.execute(insert(t.tasks), values)

    def add_skill_injection(self, record: SkillInjection) -> None:
        self.insert_record(t.skill_injections, record)

    def add_ref(self, ref: ContextRef) -> ContextRef:
        self.insert_record(t.refs, ref)
        return ref

    def add_grant(self, grant: Grant) -> Grant:
        return _with_id(grant, self.insert_record(t.grants, grant))

    def insert_record(self, table: Table, record: Any, **given: Any) -> Any:
        """Insert a record whose fields are the table's columns (``given`` wins;
        ``created_at`` now if unset); returns the new row's primary key."""
        given.setdefault("created_at", getattr(record, "created_at", None) or time.time())
        values = row_values(record, table, **given)
        return self.conn.execute(insert(table).values(**values)).inserted_primary_key

    def revoke_grant(self, grant_id: int, at_sequence: int | None, reason: str) -> None:
        res = self.conn.execute(
            update(t.grants)
            .where(t.grants.c.id == grant_id, t.grants.c.revoked_reason.is_(None))
            .values(revoked_at_sequence=at_sequence, revoked_reason=reason)
        )
        if res.rowcount == 0:
            raise NotFoundError(f"grant {grant_id} not found or already revoked")

    # -- sessions, audit, events ----------------------------------------------------------
    def create_session(
        self,
        trace_id: str,
        title: str = "",
        model: str | None = None,
        session_id: str | None = None,
    ) -> str:
        sid = session_id or uuid.uuid4().hex[:16]
        self.conn.execute(
            insert(t.sessions).values(
                id=sid, trace_id=trace_id, title=title, model=model, created_at=time.time()
            )
        )
        return sid

    def next_index(self, column: Column[Any], owner: Column[Any], key: Any, first: int = 0) -> int:
        """One past the largest ``column`` of the rows whose ``owner`` is ``key``; ``first``
        for the owner's first row (per-owner counters: turns, brief versions, requests)."""
        last = self.conn.execute(select(func.max(column)).where(owner == key)).scalar()
        return first if last is None else int(last) + 1

    def start_turn(self, session_id: str, user_sequence: int | None) -> int:
        index = self.next_index(t.turns.c.turn_index, t.turns.c.session_id, session_id)
        self.conn.execute(
            insert(t.turns).values(
                session_id=session_id,
                turn_index=index,
                user_sequence=user_sequence,
                status="running",
                started_at=time.time(),
            )
        )
        return index

    def end_turn(self, session_id: str, turn_index: int, status: str = "done") -> None:
        self.conn.execute(
            update(t.turns)
            .where(t.turns.c.session_id == session_id, t.turns.c.turn_index == turn_index)
            .values(status=status, ended_at=time.time())
        )

    def add_audit(
        self,
        trace_id: str,
        tool_name: str,
        status: str,
        elapsed_ms: float,
        output_preview: str,
        tool_call_id: str | None = None,
        step: int = 0,
        session_id: str | None = None,
    ) -> None:
        self.conn.execute(
            _INSERT_AUDIT,
            dict(
                trace_id=trace_id,
                session_id=session_id,
                step=step,
                tool_name=tool_name,
                tool_call_id=tool_call_id,
                status=status,
                elapsed_ms=elapsed_ms,
                output_preview=output_preview[:500],
                created_at=time.time(),
            ),
        )

    def add_run_event(
        self, trace_id: str, type: str, sequence: int | None = None, payload: Any = None
    ) -> None:
        self.conn.execute(
            insert(t.run_events).values(
                trace_id=trace_id,
                type=type,
                sequence=sequence,
                payload=payload,
                created_at=time.time(),
            )
        )

    def insert_rows(self, table: str, rows_: list[dict[str, Any]]) -> None:
        """Raw rows into a per-trace table (lossless re-import only)."""
        if rows_:
            self.conn.execute(insert(t.metadata.tables[table]), rows_)

    def record_import(
        self,
        content_hash: str,
        trace_ids: Sequence[str],
        path: str,
        fmt: str,
        nbytes: int | None = None,
    ) -> None:
        """The traces one import unit wrote (item ``i`` is ``trace_ids[i]``), one statement."""
        now = time.time()
        rows_ = [
            {
                "content_hash": content_hash,
                "item": i,
                "trace_id": tid,
                "path": path,
                "format": fmt,
                "imported_at": now,
                "bytes": nbytes,
            }
            for i, tid in enumerate(trace_ids)
        ]
        if rows_:
            self.conn.execute(_INSERT_IMPORT, rows_)

    # -- checkpoints -------------------------------------------------------------------
    def write_checkpoint(
        self,
        trace_id: str,
        expected_generation: int,
        type: str,
        payload: bytes,
        token_count: int = 0,
    ) -> Checkpoint:
        """Write generation ``expected_generation + 1``; a stale writer gets a conflict.

        The blob goes to a fresh write-once key first, then the metadata row; a writer that
        loses the race removes only the blob it created itself.
        """
        self._state(trace_id)  # locks the trace row (PostgreSQL) and checks it exists
        latest = self.read.latest_generation(trace_id)
        if latest != expected_generation:
            raise CheckpointConflict(
                f"trace {trace_id}: checkpoint generation {expected_generation} is stale "
                f"(latest is {latest}); reload before writing"
            )
        generation = expected_generation + 1
        digest = hashlib.sha256(payload).hexdigest()
        key = f"checkpoints/{trace_id}/{generation:08d}-{digest[:12]}-{uuid.uuid4().hex[:8]}"
        self.objects.put(key, payload)
        now = time.time()
        try:
            with self.conn.begin_nested():
                res = self.conn.execute(
                    insert(t.checkpoints).values(
                        trace_id=trace_id,
                        generation=generation,
                        type=type,
                        object_key=key,
                        token_count=token_count,
                        sha256=digest,
                        size=len(payload),
                        created_at=now,
                    )
                )
        except SAIntegrityError:
            self.objects.delete_unreferenced(key)
            raise CheckpointConflict(
                f"trace {trace_id}: another writer already wrote checkpoint generation {generation}"
            ) from None
        pk = res.inserted_primary_key
        return Checkpoint(
            trace_id,
            generation,
            type,
            key,
            token_count,
            digest,
            len(payload),
            now,
            id=int(pk[0]) if pk else None,
        )


def _tokens(nm: NewMessage) -> int:
    """The message's token count: given, or counted now."""
    if nm.token_count is not None:
        return nm.token_count
    return count_message(nm.role, nm.content, nm.tool_calls, nm.name, nm.parts).tokens


# Statements an import runs once per trace, built once: building one (``.values(...)``,
# its cache key) cost more than executing it.
_INSERT_TRACE = insert(t.traces)
_INSERT_CALL = insert(t.llm_calls)
_INSERT_IMPORT = insert(t.import_records)
_INSERT_LINE = insert(t.lines)
_BY_ID = t.traces.c.id == bindparam("tid")
_SET_STATE = update(t.traces).where(_BY_ID)
_SET_CREATED = update(t.traces).where(_BY_ID)
_SET_METADATA = update(t.traces).where(_BY_ID)
_SET_TITLE = update(t.traces).where(_BY_ID)
_INSERT_COMPACTION = insert(t.compactions)
_SET_COMPACTION = update(t.compactions).where(t.compactions.c.id == bindparam("cid"))
_TRACE_COLUMNS = (
    "id", "title", "source", "created_at", "head_sequence", "next_sequence", "next_line",
    "message_count", "metadata",
)  # fmt: skip
_SQLITE_INSERT_TRACE = (
    f"INSERT INTO traces ({', '.join(_TRACE_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _TRACE_COLUMNS)})"
)
_STATE_COLUMNS = ("next_sequence", "next_line", "head_sequence", "message_count")
_SQLITE_SET_STATE_METADATA = (
    f"UPDATE traces SET {', '.join(f'{c} = ?' for c in _STATE_COLUMNS)}, metadata = ? WHERE id = ?"
)
_TRACE_METADATA = select(t.traces.c.metadata).where(_BY_ID)
# Statements of every run step, built once: building one costs more than running it
# (bench/bench_run.py's per-step overhead).
_TRACE_FOR_UPDATE = select(t.traces).where(_BY_ID).with_for_update()
_TRACE_LINES = select(t.lines).where(t.lines.c.trace_id == bindparam("tid"))
_POSITION = select(t.messages.c.line, t.messages.c.depth).where(
    t.messages.c.trace_id == bindparam("tid"), t.messages.c.sequence == bindparam("seq")
)
_SET_LINE_TIP = update(t.lines).where(
    t.lines.c.trace_id == bindparam("tid"), t.lines.c.line == bindparam("ln")
)
_INSERT_AUDIT = insert(t.audit_log)


def _line_row(trace_id: str, li: LineInfo) -> dict[str, Any]:
    return row_values(li, t.lines, trace_id=trace_id)


def _call_values(call: LlmCall, encoded: list[Any] | None) -> dict[str, Any]:
    """The ``llm_calls`` row of ``call``."""
    return {
        "trace_id": call.trace_id,
        "call_index": call.call_index,
        "head_sequence": call.head_sequence,
        "context": encoded if encoded is not None else encode_items(call.context),
        "request_sha256": call.request_sha256,
        "model": call.model,
        "response_sequence": call.response_sequence,
        "usage": call.usage,
        "latency_ms": call.latency_ms,
        "error": call.error,
        "agent_name": call.agent_name,
        "branch_type": call.branch_type,
        "params": call.params,
        "created_at": call.created_at or time.time(),
    }


_SQLITE_INSERT = (
    f"INSERT INTO messages ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"
)


_CALL_COLUMNS = tuple(c.name for c in t.llm_calls.columns if c.name != "id")
_CALL_JSON = frozenset(c.name for c in t.llm_calls.columns if isinstance(c.type, JSON))
_CALL_ROW = itemgetter(*_CALL_COLUMNS)
_CALL_JSON_AT = tuple(i for i, c in enumerate(_CALL_COLUMNS) if c in _CALL_JSON)
_SQLITE_INSERT_CALL = (
    f"INSERT INTO llm_calls ({', '.join(_CALL_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _CALL_COLUMNS)})"
)


#: Rows per multi-row INSERT (20 columns each: well below SQLite's 32766 variables).
_ROWS_PER_INSERT = 64


_SQLITE_INSERT_MANY = f"INSERT INTO messages ({', '.join(COLUMNS)}) VALUES " + ", ".join(
    [f"({', '.join('?' for _ in COLUMNS)})"] * _ROWS_PER_INSERT
)


def _json_exact(value: Any) -> str | None:
    """A JSON column exactly as SQLAlchemy's JSON type stores it (``json.dumps``). Used for
    the ``tool_calls`` of messages a run appends (``Reader.search`` finds a tool by the
    text ``"name": "<tool>"``, or ``"name":"<tool>"`` as importers write it)."""
    if value is None:
        return None
    if type(value) is list:  # the codec's fresh list of fresh dicts: never circular
        return "".join(_JSON_DUMPS_ENCODER(value, 0))
    return json.dumps(value)


#: ``json.dumps``' own C encoder with its default settings, built once: ``json.dumps``
#: builds one (and a closure) per call, which cost more than encoding a message's calls.
#: No circular-reference check (``markers`` None): only for values made fresh here.
_JSON_DUMPS_ENCODER = c_make_encoder(
    None, json.JSONEncoder().default, encode_basestring_ascii, None, ": ", ", ", False, False,
    True,
)  # fmt: skip


def orjson_text(value: Any, finite: bool = False) -> str | None:
    """orjson's text of ``value`` (about ten times faster than ``json.dumps``, compact) if
    it reads back as the same value, else ``None``: the caller writes it with ``json``.

    ``None`` for what orjson refuses (non-string keys, integers beyond 64 bits, lone
    surrogates, datetimes and dataclasses, which ``json`` refuses too) and for NaN and
    infinities, which orjson writes as ``null``: a text holding ``null`` is read back and
    compared (no NaN, infinity or tuple in the value: the same), half the cost of
    ``json.dumps`` on the records importers keep, most of which hold a ``null``.
    ``finite``: the caller knows the value holds no NaN or infinity; no check.
    """
    try:
        out = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:
        return None
    if not finite and b"null" in out and orjson.loads(out) != value:
        return None
    return out.decode()


def _json_text(value: Any) -> str | None:
    """A JSON column that reads back as the same value (``None`` stays NULL)."""
    if value is None:
        return None
    text = orjson_text(value)
    return text if text is not None else json.dumps(value)


def _json_finite(value: Any) -> str | None:
    """``_json_text`` for a value known to hold no NaN or infinity: ``orjson_text``'s
    ``finite`` path, inline (an import encodes ~1,000 values through it)."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, option=_ORJSON_OPTIONS).decode()
    except TypeError:  # what orjson refuses (``orjson_text``): json's text
        return json.dumps(value)


_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

#: How a SQLite writer encodes the JSON columns of a row: (index in the row, encoder).
_JsonText = tuple[tuple[int, Callable[[Any], "str | None"]], ...]
_JSON_AT = tuple(COLUMNS.index(c) for c in JSON_COLUMNS)
_IMPORT_JSON: _JsonText = tuple((i, _json_text) for i in _JSON_AT)
_FINITE_JSON: _JsonText = tuple((i, _json_finite) for i in _JSON_AT)
#: A run's messages: ``tool_calls`` as ``json.dumps`` writes it (``_json_exact``).
_RUN_JSON: _JsonText = tuple(
    (i, _json_exact if COLUMNS[i] == "tool_calls" else _json_text) for i in _JSON_AT
)


def _replace_position(m: Message, line: int, depth: int) -> Message:
    return replace(m, line=line, depth=depth)


def _with_id(record: R, pk: Any) -> R:
    return replace(record, id=int(pk[0])) if pk else record


__all__ = ["HEAD", "ContextItem", "ToolCall", "Writer"]
