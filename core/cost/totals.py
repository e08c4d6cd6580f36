"""Per-trace sums of recorded usage (``trace_totals``), kept current as calls are appended.

A cost or token bound over every trace, and the Traces pane's cost column, would otherwise
read and parse every call's usage (~1 s at 50,000 calls). The sums are kept per (trace,
agent, model, shape), so pricing them is exact: a call's cost is linear in its token counts,
and the shape (which cache counts a call carries) keeps apart the calls a model without a
cache-read or cache-write price leaves unpriced. ``catch_up`` folds in the calls past each
trace's ``upto_call`` (``llm_calls`` is append-only); a trace whose call count still
differs (calls arrived out of index order) is summed again from scratch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

from sqlalchemy import Connection, Text, bindparam, cast, delete, func, insert, select, update

from core.cost.compute import CostSummary, counts_cost, parse_usage, totals_by_trace
from core.cost.compute import usd_by_trace as usd_by_trace  # its place before
from core.cost.stored import call_usages
from core.cost.table import Price, PriceTable
from core.cost.usage import TokenUsage, token_usage
from core.errors import StoreOpenError
from core.store import schema as t
from core.store.store import Store


@dataclass(slots=True)
class Totals:
    """One ``trace_totals`` row: the sums of a trace's calls of one agent, model, shape."""

    trace_id: str
    agent_name: str
    model: str
    shape: str
    """none (no token counts) | plain | read | write | both (cache reads, writes)"""
    calls: int = 0
    upto_call: int = -1
    prompt: int = 0
    uncached: int = 0
    cached: int = 0
    cache_creation: int = 0
    completion: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        return self.agent_name, self.model, self.shape

    def add(self, counts: TokenUsage | None) -> None:
        self.calls += 1
        if counts is not None:
            self.prompt += counts.prompt
            self.uncached += counts.uncached_input
            self.cached += counts.cached
            self.cache_creation += counts.cache_creation
            self.completion += counts.completion

    def usage(self) -> TokenUsage | None:
        """The sums as one usage (its ``uncached_input`` is the summed uncached input)."""
        if self.shape == "none":
            return None
        prompt = self.uncached + self.cached + self.cache_creation
        return TokenUsage(prompt, self.cached, self.cache_creation, self.completion)


FIELDS = tuple(f.name for f in fields(Totals))


def shape_of(counts: TokenUsage | None) -> str:
    if counts is None:
        return "none"
    return ("plain", "read", "write", "both")[bool(counts.cached) + 2 * bool(counts.cache_creation)]


# -- keeping the sums current --------------------------------------------------------------
def catch_up(store: Store) -> int:
    """Fold every call appended since the last catch-up into the sums; how many traces
    changed. Checked in a read first, so a store that is up to date is never locked."""
    with store.read() as r:
        if not behind(r.conn) or not stale(r.conn):
            return 0
    with store.write() as w:
        if w.conn.dialect.name == "postgresql":  # two catch-ups must not both fold a call
            w.conn.exec_driver_sql("LOCK TABLE trace_totals IN EXCLUSIVE MODE")
        late = stale(w.conn)
        held = fold(w.conn, {tid: upto for tid, (upto, _) in late.items()})
        again = {tid: -1 for tid, (_, calls) in late.items() if held.get(tid) != calls}
        if again:  # a call below upto arrived late: those traces are summed from scratch
            fold(w.conn, again)
        return len(late)


def behind(conn: Connection) -> bool:
    """Whether any call is not summed yet: one count of each table (calls only grow)."""
    calls = conn.execute(select(func.count()).select_from(t.llm_calls)).scalar()
    summed = conn.execute(select(func.sum(t.trace_totals.c.calls))).scalar()
    return int(calls or 0) != int(summed or 0)


def stale(conn: Connection) -> dict[str, tuple[int, int]]:
    """Trace id → (the last call index its sums hold, -1 to sum from scratch; its calls),
    for every trace whose sums do not cover all its calls."""
    c, s = t.llm_calls.c, t.trace_totals.c
    calls = select(c.trace_id, func.count(), func.max(c.call_index)).group_by(c.trace_id)
    summed = select(s.trace_id, func.sum(s.calls), func.max(s.upto_call)).group_by(s.trace_id)
    have = {tid: (int(n), int(upto)) for tid, n, upto in conn.execute(summed)}
    out: dict[str, tuple[int, int]] = {}
    for tid, n, last in conn.execute(calls):
        done, upto = have.get(tid, (0, -1))
        if done != n:
            out[tid] = (upto if last > upto and done < n else -1, int(n))
    return out


def fold(conn: Connection, uptos: dict[str, int]) -> dict[str, int]:
    """Add each trace's calls past its ``upto`` to its sums (all of them for -1), in one
    read of the calls and batched writes; trace id → how many calls its sums hold now."""
    s = t.trace_totals.c
    fresh = [tid for tid, upto in uptos.items() if upto < 0]
    for part in _parts(fresh):
        conn.execute(delete(t.trace_totals).where(s.trace_id.in_(part)))
    rows = {
        (r.trace_id, *r.key): r for part in _parts(list(uptos)) for r in read_totals(conn, part)
    }
    known = set(rows)
    last = dict(uptos)
    for tid, index, agent, model, raw in _calls_after(conn, uptos):
        counts = token_usage(parse_usage(raw))
        key = (tid, agent, model, shape_of(counts))
        rows.setdefault(key, Totals(*key)).add(counts)
        last[tid] = max(last[tid], index)
    for row in rows.values():
        row.upto_call = last[row.trace_id]
    _write(conn, [r for k, r in rows.items() if k not in known], [rows[k] for k in known])
    held: dict[str, int] = {}
    for row in rows.values():
        held[row.trace_id] = held.get(row.trace_id, 0) + row.calls
    return held


def _calls_after(conn: Connection, uptos: dict[str, int]) -> Iterator[Any]:
    """The calls of the traces in ``uptos`` past each one's ``upto`` (one query, or one
    per part of a long list)."""
    c = t.llm_calls.c
    cols = (c.trace_id, c.call_index, c.agent_name, c.model, cast(c.usage, Text))
    lowest = min(uptos.values(), default=-1)
    for part in _parts(list(uptos)):
        q = select(*cols).where(c.trace_id.in_(part), c.call_index > lowest)
        yield from (row for row in conn.execute(q) if row[1] > uptos[row[0]])


def _parts(items: list[str], size: int = 500) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _write(conn: Connection, new: list[Totals], changed: list[Totals]) -> None:
    """Insert the new rows and update the changed ones, each as one batch."""
    if new:
        conn.execute(insert(t.trace_totals), [asdict(row) for row in new])
    if changed:
        s = t.trace_totals.c
        keys = ("trace_id", "agent_name", "model", "shape")
        sums = [k for k in FIELDS if k not in keys]
        where = [s[k] == bindparam(f"k_{k}") for k in keys]
        values: dict[str, Any] = {k: bindparam(f"v_{k}") for k in sums}
        rows = [{**{f"k_{k}": getattr(r, k) for k in keys},
                 **{f"v_{k}": getattr(r, k) for k in sums}} for r in changed]  # fmt: skip
        conn.execute(update(t.trace_totals).where(*where).values(**values), rows)


def read_totals(conn: Connection, trace_ids: Iterable[str] | None = None) -> list[Totals]:
    s = t.trace_totals.c
    q = select(*(s[name] for name in FIELDS))
    if trace_ids is not None:
        q = q.where(s.trace_id.in_(list(trace_ids)))
    return [Totals(*row) for row in conn.execute(q)]


# -- pricing the sums ----------------------------------------------------------------------
def priced(
    rows: Iterable[Totals], table: PriceTable
) -> tuple[dict[str, CostSummary], dict[str, int]]:
    """Per trace: its cost (with ``by_agent`` and ``by_model``) and its recorded tokens
    (prompt + completion of the calls that record counts)."""
    prices: dict[str, Price | None] = {}
    costs: dict[str, CostSummary] = {}
    tokens: dict[str, int] = {}
    for row in rows:
        if row.model not in prices:
            prices[row.model] = table.lookup(row.model)
        cost = counts_cost(prices[row.model], row.usage(), row.model)
        summary = costs.setdefault(row.trace_id, CostSummary(table.table_date))
        summary.add(row.model, cost, row.agent_name, None, row.calls)
        if row.shape != "none":
            tokens[row.trace_id] = tokens.get(row.trace_id, 0) + row.prompt + row.completion
    return costs, tokens


def trace_totals(
    store: Store, table: PriceTable, trace_ids: Iterable[str] | None = None
) -> tuple[dict[str, CostSummary], dict[str, int]]:
    """``priced`` sums of ``trace_ids`` (default: every trace), caught up first; a store
    this user may only read is priced from its calls instead (one pass, as before)."""
    try:
        catch_up(store)
    except StoreOpenError:  # the write was refused: nothing was written
        with store.read() as r:
            wanted = None if trace_ids is None else set(trace_ids)
            return totals_by_trace(call_usages(r), table, wanted)
    with store.read() as r:
        return priced(read_totals(r.conn, trace_ids), table)
