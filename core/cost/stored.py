"""Costs of stored traces: light queries over ``llm_calls`` (never the call contexts).

``trace_cost`` prices one trace with its goals (the goal in focus at each call's head); the
per-trace sums that the Traces pane and search bounds read are ``core/cost/totals.py``.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Text, cast, select

from core.cost.compute import (
    CallCost,
    CallUsage,
    CostSummary,
    parse_usage,
    price_call,
)
from core.cost.table import PriceTable
from core.store import schema as t
from core.store.reader import Reader


def call_usages(reader: Reader, trace_id: str | None = None) -> list[CallUsage]:
    c = t.llm_calls.c
    usage = cast(c.usage, Text)  # orjson reads it ~3x faster than the JSON type's decoder
    q = select(c.trace_id, c.call_index, c.model, usage, c.agent_name, c.head_sequence)
    if trace_id is not None:
        q = q.where(c.trace_id == trace_id)
    q = q.order_by(c.trace_id, c.call_index)
    return [
        CallUsage(tid, index, model, parse_usage(raw), agent, head)
        for tid, index, model, raw, agent, head in reader.conn.execute(q)
    ]


def trace_cost(
    reader: Reader, trace_id: str, table: PriceTable, upto_call: int | None = None
) -> CostSummary:
    """One trace's cost (through ``upto_call`` when given), with per-goal sums."""
    calls = [
        c for c in call_usages(reader, trace_id) if upto_call is None or c.call_index <= upto_call
    ]
    goals = _goal_ids(reader, trace_id, (c.head_sequence for c in calls))
    out = CostSummary(table.table_date)
    for call in calls:
        goal = goals.get(call.head_sequence) if call.head_sequence is not None else None
        out.add(call.model, price_call(call, table), call.agent_name, goal)
    return out


def one_call_cost(reader: Reader, trace_id: str, call_index: int, table: PriceTable) -> CallCost:
    calls = [c for c in call_usages(reader, trace_id) if c.call_index == call_index]
    return price_call(calls[0], table) if calls else CallCost(None, reason="no such call")


def _goal_ids(reader: Reader, trace_id: str, sequences: Iterable[int | None]) -> dict[int, str]:
    wanted = sorted({s for s in sequences if s is not None})
    m = t.messages.c
    out: dict[int, str] = {}
    for i in range(0, len(wanted), 500):
        q = select(m.sequence, m.goal_id).where(
            m.trace_id == trace_id, m.sequence.in_(wanted[i : i + 500]), m.goal_id.is_not(None)
        )
        out.update({seq: goal for seq, goal in reader.conn.execute(q)})
    return out
