"""``ctxlens traces``: the traces in the store."""

from __future__ import annotations

import time
from typing import Any

from app.cli import CliContext
from app.commands.pricing import add_price_options, price_table


def register(sub: Any) -> None:
    p = sub.add_parser("traces", help="list the traces in the store")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_price_options(p)
    p.set_defaults(handler=run)


def run(ctx: CliContext) -> int:
    from core.cost.compute import CostSummary
    from core.cost.stored import trace_costs

    table = price_table(ctx.args)
    with ctx.store().read() as r:
        traces = r.traces()
        costs = trace_costs(r, table)
    empty = CostSummary(table.table_date)
    if ctx.args.json:
        ctx.emit_json(
            [
                {
                    "id": t.id,
                    "title": t.title,
                    "source": t.source,
                    "created_at": t.created_at,
                    "messages": t.messages,
                    "head": t.head,
                    "cost": costs.get(t.id, empty).to_json(),
                }
                for t in traces
            ]
        )
        return 0
    for t in traces:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(t.created_at))
        usd = costs.get(t.id, empty).to_json()["usd"]
        price = "no price" if usd is None else f"${usd:,.4f}"
        ctx.out.write(
            f"{t.id}  {when}  {t.source:<12} {t.messages:>8} msgs  {price:>10}  {t.title}\n"
        )
    return 0
