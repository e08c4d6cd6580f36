"""``ctxlens traces``: the traces in the store, with what each cost.

A local store file at the current schema is read with ``sqlite3`` alone
(``core/store/quick.py``): listing traces is start-up bound, SQLAlchemy would dominate.
Costs come from the recorded usage of each trace's calls and the price table
(``core/cost/``), on both paths.
"""

from __future__ import annotations

from typing import Any

from app.cli import CliContext
from app.commands.pricing import add_price_options, price_table


def register(sub: Any) -> None:
    p = sub.add_parser("traces", help="list the traces in the store")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_price_options(p)
    p.set_defaults(handler=run)


def listing(ctx: CliContext) -> list[dict[str, Any]]:
    """``[{id, title, source, created_at, messages, head, cost}]``, oldest first."""
    from core.cost.compute import CallUsage, CostSummary, costs_by_trace, parse_usage
    from core.store.quick import call_usages, list_traces

    table = price_table(ctx.args)
    rows, calls = list_traces(ctx.db), call_usages(ctx.db)
    if rows is None or calls is None:
        rows, costs = _from_store(ctx, table)
    else:
        usages = (CallUsage(c[0], c[1], c[2], parse_usage(c[3]), c[4], c[5]) for c in calls)
        costs = costs_by_trace(usages, table)
    empty = CostSummary(table.table_date)
    return [{**row, "cost": costs.get(row["id"], empty).to_json()} for row in rows]


def _from_store(ctx: CliContext, table: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from core.cost.stored import trace_costs

    with ctx.store().read() as r:
        rows = [
            {
                "id": t.id,
                "title": t.title,
                "source": t.source,
                "created_at": t.created_at,
                "messages": t.messages,
                "head": t.head,
            }
            for t in r.traces()
        ]
        return rows, trace_costs(r, table)


def run(ctx: CliContext) -> int:
    traces = listing(ctx)
    if ctx.args.json:
        ctx.emit_json(traces)
        return 0
    import time

    for t in traces:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(t["created_at"]))
        usd = t["cost"]["usd"]
        price = "no price" if usd is None else f"${usd:,.4f}"
        line = f"{t['id']}  {when}  {t['source']:<12} {t['messages']:>8} msgs  {price:>10}"
        ctx.out.write(f"{line}  {t['title']}\n")
    return 0
