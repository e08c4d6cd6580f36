"""Read queries over one connection: traces, the main path page by page, and the records.

Nothing here loads a whole trace: the main path is paged through its line segments
(``core/store/paths.py``) so memory grows with the page, not the trace.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    Table,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    or_,
    select,
)

from core.agents import is_main_agent
from core.errors import NotFoundError
from core.records import (
    Checkpoint,
    CompactionEvent,
    ContextRef,
    GoalEvent,
    Grant,
    LlmCall,
    Message,
    SkillInjection,
    Trace,
)
from core.store import rows
from core.store import schema as t
from core.store.path_reads import IN_CHUNK, PathReads
from core.store.paths import LineInfo, Segment, on_path, path_segments, slice_segments
from core.store.pending import with_pending_counted
from core.store.previews import MessagePreview, preview_columns, preview_of_row
from core.store.triggers import PENDING_TOKENS


class Reader(PathReads[Message]):
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.count_pending = True
        """Count messages written with a pending token count (``PENDING_TOKENS``) as they
        are read, so every ``Message`` carries its real count. An importer turns this off
        for reads that only need the structure (request hashes)."""

    def _messages(self, result: Any) -> list[Message]:
        """``Message`` records of query rows, pending token counts counted (one batch)."""
        out = [rows.message_from_row(r) for r in result]
        if self.count_pending and any(m.token_count == PENDING_TOKENS for m in out):
            out = with_pending_counted(out)
        return out

    # -- traces -----------------------------------------------------------------------
    def trace(self, trace_id: str) -> Trace:
        row = self.conn.execute(select(t.traces).where(t.traces.c.id == trace_id)).first()
        if row is None:
            raise NotFoundError(f"trace {trace_id!r} not found")
        return rows.trace_from_row(row)

    def find_trace(self, prefix: str) -> Trace:
        """A trace by id or unambiguous id prefix (what users type)."""
        if not prefix:
            raise NotFoundError("empty trace id: give a trace id or the start of one")
        row = self.conn.execute(select(t.traces).where(t.traces.c.id == prefix)).first()
        if row is not None:
            return rows.trace_from_row(row)
        shown = 3
        found = self.conn.execute(
            select(t.traces)
            .where(t.traces.c.id.startswith(prefix, autoescape=True))
            .order_by(t.traces.c.id)
            .limit(shown + 1)
        ).all()
        if len(found) == 1:
            return rows.trace_from_row(found[0])
        if not found:
            raise NotFoundError(f"trace {prefix!r} not found")
        ids = ", ".join(r.id for r in found[:shown]) + (", …" if len(found) > shown else "")
        raise NotFoundError(
            f"trace id prefix {prefix!r} is ambiguous (matches {ids}); give more of the id"
        )

    def traces(self) -> list[Trace]:
        q = select(t.traces).order_by(t.traces.c.created_at, t.traces.c.id)
        return [rows.trace_from_row(r) for r in self.conn.execute(q)]

    # -- lines and the main path ------------------------------------------------------
    def lines(self, trace_id: str) -> dict[int, LineInfo]:
        q = select(t.lines).where(t.lines.c.trace_id == trace_id)
        return {r.line: rows.line_from_row(r) for r in self.conn.execute(q)}

    def _position(self, trace_id: str, sequence: int) -> tuple[int, int]:
        row = self.conn.execute(
            select(t.messages.c.line, t.messages.c.depth).where(
                t.messages.c.trace_id == trace_id, t.messages.c.sequence == sequence
            )
        ).first()
        if row is None:
            raise NotFoundError(f"message {sequence} not found in trace {trace_id!r}")
        return int(row.line), int(row.depth)

    def segments(self, trace_id: str, head: int | None = None) -> list[Segment]:
        """The path from the root to ``head`` (default: the trace's head) as segments."""
        if head is None:
            head = self.trace(trace_id).head
            if head is None:
                return []
        line, depth = self._position(trace_id, head)
        return path_segments(self.lines(trace_id), line, depth)

    def main_path_length(self, trace_id: str, head: int | None = None) -> int:
        return sum(len(s) for s in self.segments(trace_id, head))

    def segments_page(
        self, trace_id: str, offset: int, limit: int, segments: list[Segment]
    ) -> list[Message]:
        return self._messages(self._path_rows(_WHOLE_ROWS, trace_id, offset, limit, segments))

    def main_path_previews(
        self, trace_id: str, offset: int, limit: int, segments: list[Segment], chars: int
    ) -> list[MessagePreview]:
        """Like ``main_path_page``, but only what a list row shows (``MessagePreview``: the
        content cut to ``chars``); a message whose token count is still pending is read
        whole, so it is counted as ``main_path_page`` counts it."""
        rows = self._path_rows(_PREVIEW_ROWS, trace_id, offset, limit, segments, chars=chars)
        found = [preview_of_row(r) for r in rows]
        if self.count_pending and any(p.token_count == PENDING_TOKENS for p in found):
            counted = self.main_path_page(trace_id, offset, limit, segments=segments)
            tokens = {m.sequence: m.token_count for m in counted}
            found = [replace(p, token_count=tokens[p.sequence]) for p in found]
        return found

    def _path_rows(
        self,
        statement: Select[Any],
        trace_id: str,
        offset: int,
        limit: int,
        segs: list[Segment],
        **params: Any,
    ) -> list[Any]:
        """Rows of ``statement`` (``_path_select``) for path rows ``offset..offset+limit-1``."""
        out: list[Any] = []
        for s in slice_segments(segs, offset, limit):
            where = {"trace_id": trace_id, "line": s.line, "first": s.first, "last": s.last}
            out.extend(self.conn.execute(statement, {**where, **params}).all())
        return out

    def iter_main_path(
        self, trace_id: str, head: int | None = None, page: int = 2000
    ) -> Iterator[Message]:
        segs = self.segments(trace_id, head)
        total = sum(len(s) for s in segs)
        for offset in range(0, total, page):
            yield from self.main_path_page(trace_id, offset, page, segments=segs)

    def main_path_sequences(self, trace_id: str, head: int | None = None) -> list[int]:
        """Just the sequence numbers of the path (ints only; cheap even for big traces)."""
        out: list[int] = []
        for s in self.segments(trace_id, head):
            q = (
                select(t.messages.c.sequence)
                .where(
                    t.messages.c.trace_id == trace_id,
                    t.messages.c.line == s.line,
                    t.messages.c.depth.between(s.first, s.last),
                )
                .order_by(t.messages.c.depth)
            )
            out.extend(self.conn.execute(q).scalars().all())
        return out

    def is_on_path(self, trace_id: str, sequence: int, segments: list[Segment]) -> bool:
        line, depth = self._position(trace_id, sequence)
        return on_path(segments, line, depth)

    def positions(self, trace_id: str, sequences: Sequence[int]) -> dict[int, tuple[int, int]]:
        """``(line, depth)`` of each given message; unknown sequences are left out."""
        out: dict[int, tuple[int, int]] = {}
        wanted = sorted(set(sequences))
        m = t.messages.c
        for i in range(0, len(wanted), IN_CHUNK):
            q = select(m.sequence, m.line, m.depth).where(
                m.trace_id == trace_id, m.sequence.in_(wanted[i : i + IN_CHUNK])
            )
            out.update({int(r.sequence): (int(r.line), int(r.depth)) for r in self.conn.execute(q)})
        return out

    def parents(self, trace_id: str, sequences: Sequence[int]) -> dict[int, int | None]:
        out: dict[int, int | None] = {}
        wanted = sorted(set(sequences))
        m = t.messages.c
        for i in range(0, len(wanted), IN_CHUNK):
            q = select(m.sequence, m.parent_sequence).where(
                m.trace_id == trace_id, m.sequence.in_(wanted[i : i + IN_CHUNK])
            )
            out.update({int(r.sequence): r.parent_sequence for r in self.conn.execute(q)})
        return out

    def goal_counts(
        self, trace_id: str, segments: Sequence[Segment] | None = None
    ) -> list[tuple[str, int, int]]:
        """``(goal_id, messages, tokens)`` for every goal id recorded on a message; with
        ``segments``, only messages on that path (each segment is an index range)."""
        m = t.messages.c
        conds: list[Any] = [m.trace_id == trace_id, m.goal_id.is_not(None)]
        if segments is not None:
            if not segments:
                return []
            conds.append(
                or_(*(and_(m.line == s.line, m.depth.between(s.first, s.last)) for s in segments))
            )
        counted = case((m.token_count == PENDING_TOKENS, 0), else_=m.token_count)
        q = (
            select(m.goal_id, func.count(), func.coalesce(func.sum(counted), 0))
            .where(*conds)
            .group_by(m.goal_id)
        )
        totals = {str(g): [int(n), int(tok)] for g, n, tok in self.conn.execute(q)}
        if self.count_pending:  # messages not counted yet: count them now
            pending = select(t.messages).where(*conds, m.token_count == PENDING_TOKENS)
            for msg in self._messages(self.conn.execute(pending)):
                totals[str(msg.goal_id)][1] += msg.token_count
        return [(g, n, tok) for g, (n, tok) in totals.items()]

    # -- messages ---------------------------------------------------------------------
    def message(self, trace_id: str, sequence: int) -> Message:
        row = self._trace_row(t.messages, trace_id, f"message {sequence}", sequence=sequence)
        return self._messages([row])[0]

    def messages(self, trace_id: str, sequences: Sequence[int]) -> dict[int, Message]:
        out: dict[int, Message] = {}
        wanted = sorted(set(sequences))
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            rows_ = self.conn.execute(_MESSAGES_IN, {"tid": trace_id, "seqs": chunk})
            for msg in self._messages(rows_):
                out[msg.sequence] = msg
        return out

    def all_messages(self, trace_id: str, page: int = 2000) -> Iterator[Message]:
        """Every stored message of a trace (all branches) in sequence order, paged."""
        last = -1
        while True:
            q = (
                select(t.messages)
                .where(t.messages.c.trace_id == trace_id, t.messages.c.sequence > last)
                .order_by(t.messages.c.sequence)
                .limit(page)
            )
            batch = self._messages(self.conn.execute(q))
            if not batch:
                return
            yield from batch
            last = batch[-1].sequence

    def line_messages(self, trace_id: str, line: int) -> list[Message]:
        m = t.messages.c
        return self._messages_where(trace_id, m.line == line, order=m.depth)

    def tool_result_for(self, trace_id: str, tool_call_id: str) -> list[Message]:
        return self._messages_where(trace_id, t.messages.c.tool_call_id == tool_call_id)

    def _messages_where(self, trace_id: str, cond: Any, order: Any = None) -> list[Message]:
        """The messages of ``trace_id`` meeting ``cond``, by ``order`` (default: sequence)."""
        m = t.messages.c
        q = select(t.messages).where(m.trace_id == trace_id, cond)
        return self._messages(self.conn.execute(q.order_by(m.sequence if order is None else order)))

    def search(
        self,
        trace_id: str,
        text: str | None = None,
        role: str | None = None,
        tool_name: str | None = None,
        kind: str | None = None,
        goal_id: str | None = None,
        limit: int = 500,
    ) -> list[int]:
        """Sequences of messages matching all given filters (any branch), ascending."""
        m = t.messages.c
        conds: list[Any] = [m.trace_id == trace_id]
        if text:
            # plain text also finds a tool call by its name or arguments and a tool result by
            # its tool, as the timeline shows them (``render_chart({...})``, ``render_chart →``)
            conds.append(
                or_(
                    m.content.contains(text, autoescape=True),
                    cast(m.tool_calls, Text).contains(text, autoescape=True),
                    m.name.contains(text, autoescape=True),
                )
            )
        if role:
            conds.append(m.role == role)
        if kind:
            conds.append(m.kind == kind)
        if goal_id:
            conds.append(or_(m.goal_id == goal_id, m.goal_id.startswith(goal_id + ".")))
        if tool_name:
            # A tool result names its tool; a call carries it in tool_calls JSON, written
            # by ``json`` (runs: ``"name": "x"``) or orjson (imports: ``"name":"x"``).
            calls = cast(m.tool_calls, Text)
            conds.append(
                or_(
                    m.name == tool_name,
                    calls.contains(f'"name": "{tool_name}"', autoescape=True),
                    calls.contains(f'"name":"{tool_name}"', autoescape=True),
                )
            )
        q = select(m.sequence).where(and_(*conds)).order_by(m.sequence).limit(limit)
        return list(self.conn.execute(q).scalars())

    # -- records ----------------------------------------------------------------------
    def llm_calls(self, trace_id: str) -> list[LlmCall]:
        found = self._trace_rows(t.llm_calls, trace_id, "call_index")
        return [rows.call_from_row(r) for r in found]

    def llm_call(self, trace_id: str, call_index: int) -> LlmCall:
        what = f"LLM call {call_index}"
        row = self._trace_row(t.llm_calls, trace_id, what, call_index=call_index)
        return rows.call_from_row(row)

    def call_outcomes(self, trace_id: str) -> list[dict[str, Any]]:
        """Each main-agent call's ``head_sequence``, ``error`` and ``params`` (no context):
        what a summary needs to keep model-call failures and retries. The main agent's
        calls are those ``core/agents.py:is_main_agent`` says are (no side branch, whatever
        the agent's name)."""
        c = t.llm_calls.c
        q = (
            select(c.call_index, c.head_sequence, c.error, c.params, c.branch_type)
            .where(c.trace_id == trace_id)
            .order_by(c.call_index)
        )
        rows = [dict(r._mapping) for r in self.conn.execute(q)]
        return [
            {k: v for k, v in r.items() if k != "branch_type"} for r in rows if is_main_agent(r)
        ]

    def llm_call_count(self, trace_id: str) -> int:
        return int(self.conn.execute(_CALL_COUNT, {"tid": trace_id}).scalar_one())

    def compactions(self, trace_id: str) -> list[CompactionEvent]:
        found = self._trace_rows(t.compactions, trace_id, "id")
        return [rows.compaction_from_row(r) for r in found]

    def goal_events(self, trace_id: str) -> list[GoalEvent]:
        found = self._trace_rows(t.goal_events, trace_id, "sequence", "id")
        return [rows.goal_event_from_row(r) for r in found]

    def skill_injections(self, trace_id: str) -> list[SkillInjection]:
        found = self._trace_rows(t.skill_injections, trace_id, "id")
        return [rows.skill_injection_from_row(r) for r in found]

    def refs(self, trace_id: str) -> list[ContextRef]:
        return [rows.ref_from_row(r) for r in self._trace_rows(t.refs, trace_id, "created_at")]

    def ref(self, ref_id: str, trace_id: str | None = None) -> ContextRef:
        """A ref by id; ids are unique per trace, so give the trace when you know it (a
        replay holds the same ids as its source)."""
        q = select(t.refs).where(t.refs.c.id == ref_id)
        if trace_id is not None:
            q = q.where(t.refs.c.trace_id == trace_id)
        row = self.conn.execute(q.order_by(t.refs.c.created_at).limit(1)).first()
        if row is None:
            where = f" in trace {trace_id!r}" if trace_id is not None else ""
            raise NotFoundError(f"ref {ref_id!r} not found{where}")
        return rows.ref_from_row(row)

    def ref_head(self, trace_id: str, ref_id: str, chars: int) -> str | None:
        """The first ``chars`` characters of a ref's content without reading the rest (an
        image's size is in its first bytes; ``None``: no such ref, or no content)."""
        head = func.substr(t.refs.c.content, 1, chars)
        q = select(head).where(t.refs.c.trace_id == trace_id, t.refs.c.id == ref_id)
        value = self.conn.execute(q.limit(1)).scalar()
        return None if value is None else str(value)

    def grants(self, trace_id: str) -> list[Grant]:
        return [rows.grant_from_row(r) for r in self._trace_rows(t.grants, trace_id, "id")]

    def task_snapshots(self, trace_id: str) -> dict[int, list[dict[str, Any]]]:
        """Task-list snapshots (``todo_write``) keyed by the message sequence they belong to.

        Each snapshot is the full list at that message; the caller picks the latest one on
        the path it cares about (INJ-4 restores the latest on the main path).
        """
        out: dict[int, list[dict[str, Any]]] = {}
        for r in self._trace_rows(t.tasks, trace_id, "sequence", "id"):
            m = r._mapping
            out.setdefault(int(m["sequence"]), []).append(
                {
                    "id": m["task_id"],
                    "content": m["content"],
                    "status": m["status"],
                    "blocked_by": m["blocked_by"],
                    "owner": m["owner"],
                }
            )
        return out

    def checkpoints(self, trace_id: str) -> list[Checkpoint]:
        found = self._trace_rows(t.checkpoints, trace_id, "generation")
        return [rows.checkpoint_from_row(r) for r in found]

    def latest_generation(self, trace_id: str) -> int:
        q = select(func.max(t.checkpoints.c.generation)).where(t.checkpoints.c.trace_id == trace_id)
        value = self.conn.execute(q).scalar()
        return int(value) if value is not None else 0

    def table_rows(self, table: str, trace_id: str) -> list[dict[str, Any]]:
        """Raw rows of a per-trace table (export and generic panels)."""
        tab = t.metadata.tables[table]
        order = "id" if "id" in tab.c else next(iter(tab.primary_key.columns)).name
        return [dict(r._mapping) for r in self._trace_rows(tab, trace_id, order)]

    def sessions(self, trace_id: str) -> list[dict[str, Any]]:
        return [dict(r._mapping) for r in self._trace_rows(t.sessions, trace_id, "created_at")]

    def turns(self, session_id: str) -> list[dict[str, Any]]:
        q = select(t.turns).where(t.turns.c.session_id == session_id).order_by(t.turns.c.turn_index)
        return [dict(r._mapping) for r in self.conn.execute(q)]

    def _trace_row(self, table: Table, trace_id: str, what: str, **match: Any) -> Any:
        """The row of ``trace_id`` whose columns equal ``match``; ``what`` names it when
        there is none."""
        conds = [table.c[name] == value for name, value in match.items()]
        row = self.conn.execute(select(table).where(table.c.trace_id == trace_id, *conds)).first()
        if row is None:
            raise NotFoundError(f"{what} not found in trace {trace_id!r}")
        return row

    def _trace_rows(self, table: Table, trace_id: str, *order: str) -> Any:
        """The rows of ``trace_id`` in a per-trace table, ordered by the columns ``order``."""
        q = select(table).where(table.c.trace_id == trace_id)
        return self.conn.execute(q.order_by(*(table.c[name] for name in order)))

    def may_be_imported(self, nbytes: int) -> bool:
        """Whether an earlier import had units of ``nbytes`` bytes (or of unknown size)."""
        return self.conn.execute(_SIZE_IMPORTED, {"n": nbytes}).first() is not None

    def imported(self, content_hash: str) -> list[str]:
        return list(self.conn.execute(_IMPORTED, {"h": content_hash}).scalars())


#: Built once (``messages`` runs per model call of an import; building the statement cost
#: more than running it).
_CALL_COUNT = (
    select(func.count()).select_from(t.llm_calls).where(t.llm_calls.c.trace_id == bindparam("tid"))
)
_ir = t.import_records.c
#: Asked once per import unit (each built statement cost ~0.2 ms, more than running it).
_SIZE_IMPORTED = (
    select(_ir.item).where(or_(_ir.bytes == bindparam("n"), _ir.bytes.is_(None))).limit(1)
)
_IMPORTED = select(_ir.trace_id).where(_ir.content_hash == bindparam("h")).order_by(_ir.item)
_MESSAGES_IN = select(t.messages).where(
    t.messages.c.trace_id == bindparam("tid"),
    t.messages.c.sequence.in_(bindparam("seqs", expanding=True)),
)


def _path_select(*columns: Any) -> Select[Any]:
    """Columns of one line's messages between two depths, in path order: built once, so a
    timeline page (eight of these) does not pay SQLAlchemy's statement construction and
    cache-key walk each time (more than decoding the rows cost)."""
    m = t.messages.c
    return (
        select(*columns)
        .where(
            m.trace_id == bindparam("trace_id"),
            m.line == bindparam("line"),
            m.depth.between(bindparam("first"), bindparam("last")),
        )
        .order_by(m.depth)
    )


_WHOLE_ROWS = _path_select(t.messages)
_PREVIEW_ROWS = _path_select(*preview_columns())
