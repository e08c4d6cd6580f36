"""Run a cross-trace query: trace filters in SQL, message hits from the full-text index.

Order: trace-level filters (source, model, dates, has:compaction, has:error, trace id)
narrow the traces with one query over ``traces``; ``cost`` and ``tokens`` bounds are judged
for those traces from their usage sums (``core/cost/totals.py``, a few rows per trace);
message hits come newest first by row id (an FTS5 rowid scan or the messages primary key,
never a sort of all matches).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, cast, column, exists, func, or_, select, table, text
from sqlalchemy.types import Text as SaText

from core.cost import totals
from core.cost.compute import CostSummary
from core.cost.table import PriceTable, load_table
from core.fields_json import FieldsJson
from core.search.index import catch_up
from core.search.query import Query
from core.store import schema as t
from core.store.fulltext import FTS_TABLE, PG_BODY
from core.store.reader import Reader
from core.store.store import Store
from core.undated import KEY, created_recorded

PAGE = 500
Sums = tuple[dict[str, CostSummary], dict[str, int]]
"""Per trace: its cost and its recorded tokens (``core/cost/totals.py:trace_totals``)."""
IN_LIST_MAX = 64
"""Up to this many candidate traces go into the SQL as ``trace_id IN (…)``; with more, the
planner would walk messages by trace and probe the full-text index (seconds at 5M), so the
hits are filtered by trace after the index scan instead."""


@dataclass(frozen=True, slots=True)
class Hit(FieldsJson):
    trace_id: str
    title: str
    source: str
    sequence: int | None
    """``None`` for a trace-only query (open the trace at its head)."""
    role: str | None
    kind: str | None
    snippet: str
    created_at: float
    time_basis: dict[str, Any] | None = None
    """The trace's ``metadata.time_basis``: how its times were read where the file wrote
    them without a zone (``core/importers/times.py``); ``None``: they carried it."""
    created_recorded: bool = True
    """False for a message the source did not date: ``created_at`` is its trace's fill
    (``core/undated.py``)."""


@dataclass(frozen=True)
class Results:
    query: Query
    hits: tuple[Hit, ...]
    truncated: bool
    indexed: int
    """Messages added to the full-text index before this query ran."""
    elapsed_ms: float


def search(
    store: Store, query: Query, limit: int = 200, table: PriceTable | None = None
) -> Results:
    """Every trace of ``store`` searched; at most ``limit`` hits, newest first."""
    start = time.perf_counter()
    indexed = _catch_up(store) if query.words else 0
    sums = totals.trace_totals(store, table or load_table()) if query.bounds else None
    with store.read() as r:
        found = list(_hits(r, query, sums, limit + 1))
    elapsed = (time.perf_counter() - start) * 1000
    return Results(query, tuple(found[:limit]), len(found) > limit, indexed, elapsed)


def _catch_up(store: Store) -> int:
    with store.write() as w:
        return catch_up(w.conn)


def _hits(r: Reader, q: Query, sums: Sums | None, limit: int) -> Iterator[Hit]:
    traces = {row.id: row for row in r.conn.execute(_trace_query(q))}
    if not traces:
        return
    if q.bounds:
        assert sums is not None
        kept = _passing(r, q, sums, list(traces))
        traces = {tid: row for tid, row in traces.items() if tid in kept}
    if not traces:
        return
    if not q.on_messages:
        rows = sorted(traces.values(), key=lambda row: row.created_at, reverse=True)
        yield from [_trace_hit(row) for row in rows][:limit]
        return
    n = 0
    narrow = (_narrowed(q) or bool(q.bounds)) and len(traces) <= IN_LIST_MAX
    dated: dict[str, Callable[[int], bool]] = {}
    for row in _message_rows(r, q, list(traces) if narrow else None):
        tr = traces.get(row.trace_id)
        if tr is None:
            continue
        if tr.id not in dated:
            dated[tr.id] = created_recorded({KEY: tr.undated})
        yield Hit(
            tr.id,
            tr.title,
            tr.source,
            row.sequence,
            row.role,
            row.kind,
            _snippet(row.content, q.words),
            row.created_at,
            _basis(tr.time_basis),
            dated[tr.id](row.sequence),
        )
        n += 1
        if n >= limit:
            return


def _narrowed(q: Query) -> bool:
    return any((q.model, q.source, q.trace, q.after, q.before, q.has))


def _trace_query(q: Query) -> Select[Any]:
    tr, calls = t.traces.c, t.llm_calls.c
    conds = _wanted(
        (q.source, lambda: tr.source == q.source),
        (q.trace, lambda: tr.id.startswith(q.trace, autoescape=True)),
        (q.after is not None, lambda: tr.created_at >= q.after),
        (q.before is not None, lambda: tr.created_at < q.before),
        (q.model, lambda: exists().where(calls.trace_id == tr.id,
                                         calls.model.contains(q.model, autoescape=True))),
        ("compaction" in q.has, lambda: exists().where(t.compactions.c.trace_id == tr.id)),
        ("error" in q.has, lambda: _has_error(tr.id)),
    )  # fmt: skip
    basis = tr.metadata["time_basis"].label("time_basis")
    undated = tr.metadata[KEY].label("undated")  # the one key, not the whole metadata
    return select(tr.id, tr.title, tr.source, tr.created_at, basis, undated).where(
        and_(True, *conds)
    )


def _has_error(trace_id: Any) -> Any:
    """A call that recorded an error, a tool call that did not end ``ok``, or (an import)
    tool results the file marked as errors (``tool_errors`` in the trace's metadata)."""
    calls, audit = t.llm_calls.c, t.audit_log.c
    return or_(
        exists().where(calls.trace_id == trace_id, calls.error.is_not(None)),
        exists().where(audit.trace_id == trace_id, audit.status.not_in(("ok",))),
        t.traces.c.metadata["tool_errors"].as_integer() > 0,
    )


def _wanted(*checks: tuple[Any, Callable[[], Any]]) -> list[Any]:
    """The SQL conditions of the filters a query sets (each built only when set)."""
    return [make() for wanted, make in checks if wanted]


def _message_rows(r: Reader, q: Query, trace_ids: list[str] | None) -> Iterator[Any]:
    m = t.messages.c
    cols = (m.id, m.trace_id, m.sequence, m.role, m.kind, m.content, m.created_at)
    conds = _message_filters(q)
    if trace_ids is not None:
        conds.append(m.trace_id.in_(trace_ids))
    last: int | None = None
    while True:
        base = select(*cols).where(*conds)
        if q.words and r.conn.dialect.name == "sqlite":
            fts = table(FTS_TABLE, column("rowid"))
            base = base.select_from(t.messages.join(fts, fts.c.rowid == m.id)).where(
                text(f"{FTS_TABLE} MATCH :fts").bindparams(fts=fts_query(q.words))
            )
            order = fts.c.rowid
        else:
            if q.words:
                base = base.where(
                    text(f"{PG_BODY} @@ to_tsquery('simple', :tsq)").bindparams(
                        tsq=ts_query(q.words)
                    )
                )
            order = m.id
        if last is not None:
            base = base.where(order < last)
        rows = r.conn.execute(base.order_by(order.desc()).limit(PAGE)).all()
        yield from rows
        if len(rows) < PAGE:
            return
        last = rows[-1].id


def _message_filters(q: Query) -> list[Any]:
    m = t.messages.c
    return _wanted(
        (q.role, lambda: m.role == q.role),
        (q.kind, lambda: m.kind == q.kind),
        (q.goal, lambda: or_(m.goal_id == q.goal, m.goal_id.startswith(f"{q.goal}."))),
        (q.tool, lambda: _uses_tool(str(q.tool))),
    )


def _uses_tool(tool: str) -> Any:
    """A tool result of ``tool``, or a message that calls it."""
    m = t.messages.c
    calls = cast(m.tool_calls, SaText)
    return or_(
        m.name == tool,
        *(
            calls.contains(f'"name":{space}"{spelled}"', autoescape=True)
            for spelled in _json_spellings(tool)
            for space in (" ", "")
        ),
    )


def _json_spellings(text: str) -> list[str]:
    """``text`` as a JSON string body may hold it: as written, and escaped the way
    ``json.dumps`` writes it (a run's tool calls are stored so: ``wríte`` is
    ``wr\\u00edte``, a quote ``\\"``)."""
    return sorted({text, json.dumps(text)[1:-1]})


def fts_query(words: tuple[str, ...]) -> str:
    """Each word as a quoted FTS5 phrase (no operator can be injected); ``word*`` asks
    for a prefix. Prefixes are opt-in: a prefix of a common word merges many doclists
    (1.1 s at 5M messages where the word itself takes 1 ms)."""
    return " ".join(_phrase(w) for w in words)


def _phrase(word: str) -> str:
    star = "*" if word.endswith("*") and word.strip("*") else ""
    return '"' + word.strip("*").replace('"', '""') + '"' + star


def ts_query(words: tuple[str, ...]) -> str:
    """The PostgreSQL ``to_tsquery`` form: each word's lexemes, all required (``:*`` for a
    prefix asked for with ``word*``)."""
    terms = []
    for w in words:
        star = ":*" if w.endswith("*") else ""
        lexemes = "".join(ch if ch.isalnum() else " " for ch in w).split()
        terms += [f"{lx}{star}" if i == len(lexemes) - 1 else lx for i, lx in enumerate(lexemes)]
    return " & ".join(terms) or "''"


def _snippet(content: str, words: tuple[str, ...], width: int = 140) -> str:
    flat = " ".join((content or "").split())
    at = min((i for w in words if (i := flat.lower().find(w.lower())) >= 0), default=0)
    start = max(0, at - width // 3)
    return ("…" if start else "") + flat[start : start + width]


def _trace_hit(row: Any) -> Hit:
    return Hit(
        row.id, row.title, row.source, None, None, None, "", row.created_at, _basis(row.time_basis)
    )


def _basis(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _passing(r: Reader, q: Query, sums: Sums, trace_ids: list[str]) -> set[str]:
    """The traces among ``trace_ids`` within the ``cost``/``tokens`` bounds, judged from
    their usage sums; a trace whose calls record no tokens is judged by its messages'."""
    costs, tokens = sums
    tokens = {**tokens, **_message_tokens(r, [tid for tid in trace_ids if not tokens.get(tid)])}
    return {tid for tid in trace_ids if _within(q, costs.get(tid), tokens.get(tid, 0))}


def _within(q: Query, cost: CostSummary | None, tokens: int) -> bool:
    usd = cost.usd if cost is not None and cost.priced_calls else None
    values = {"cost": usd, "tokens": float(tokens)}
    return all(b.holds(values[b.field]) for b in q.bounds)


def _message_tokens(r: Reader, trace_ids: list[str]) -> dict[str, int]:
    if not trace_ids:
        return {}
    m = t.messages.c
    q = (
        select(m.trace_id, func.coalesce(func.sum(m.token_count), 0))
        .where(m.trace_id.in_(trace_ids), m.token_count > 0)
        .group_by(m.trace_id)
    )
    return {tid: int(n) for tid, n in r.conn.execute(q)}
