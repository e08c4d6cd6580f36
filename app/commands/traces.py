"""``ctxlens traces``: the traces in the store, with model, start, duration, calls, tokens
and what each cost.

A local store file at the current schema is read with ``sqlite3`` alone
(``core/store/quick.py``): listing traces is start-up bound, SQLAlchemy would dominate.
The figures come from ``core/inspector/trace_list.py:assemble`` and the costs from the
recorded usage and the price table (``core/cost/``) on both paths.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from app.cli import CliContext
from app.commands.pricing import add_price_options, price_table

HELP = "list the traces in the store"
RERUNS = False
"""Lists traces, runs none again: starts without the re-runners' registration (``app/cli.py``)."""


def arguments(p: ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_price_options(p)


def listing(ctx: CliContext) -> list[Any]:
    """``(TraceSummary, cost JSON)`` per trace, oldest first."""
    from core.cost.compute import (
        CallUsage,
        CostSummary,
        parse_usage,
        recorded_cost_text,
        totals_by_trace,
        usd_by_trace,
    )
    from core.inspector.trace_list import assemble
    from core.store.quick import figures_and_calls

    table = price_table(ctx.args)
    quick = figures_and_calls(ctx.db)
    if quick is None:
        rows, costs = _from_store(ctx, table)
    else:
        figures, calls = quick
        usages = (CallUsage(c[0], c[1], c[2], parse_usage(c[3]), c[4], c[5]) for c in calls)
        costs, tokens = totals_by_trace(usages, table)
        rows = assemble(*figures, usd_by_trace(costs, tokens))
    empty = CostSummary(table.table_date)
    out = []
    for row in rows:
        cost = costs.get(row.trace.id, empty).to_json()
        recorded = recorded_cost_text(row.trace.metadata)
        out.append((row, {**cost, "recorded": recorded} if recorded else cost))
    return out


def _from_store(ctx: CliContext, table: Any) -> tuple[list[Any], dict[str, Any]]:
    from core.cost.compute import usd_by_trace
    from core.cost.totals import trace_totals
    from core.inspector.trace_list import summaries

    store = ctx.store()
    costs, tokens = trace_totals(store, table)
    with store.read() as r:
        return summaries(r, usd_by_trace(costs, tokens)), costs


def run(ctx: CliContext) -> int:
    rows = listing(ctx)
    if ctx.args.json:
        ctx.emit_json([{**s.to_json(), "cost": cost} for s, cost in rows])
        return 0
    from core.inspector.recorded_time import shown

    for s, cost in rows:
        t = s.trace
        # a start whose zone the file did not record: its wall clock, "time zone not recorded"
        when = shown(s.start, s.time_basis, "%Y-%m-%d %H:%M") if s.dated else "undated"
        price = cost["text"]
        if cost.get("recorded"):  # what the tool recorded first, then ctxlens's table
            price = f"{cost['recorded']}; ctxlens: {price}"
        ctx.out.write(
            f"{t.id}  {when:<16}  {t.source:<12} {t.messages:>8} msgs {s.calls:>5} calls  "
            f"{price:>10}  {s.model or '-':<24} {t.title}\n"
        )
    return 0
