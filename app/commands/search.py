"""``ctxlens search``: one query over every trace in the store (the GUI's search syntax)."""

from __future__ import annotations

from argparse import ArgumentParser

from app.cli import CliContext
from app.commands.pricing import add_price_options, price_table

HELP = (
    "search every trace: text, tool:, role:, kind:, goal:, model:, source:, "
    "after:/before:DATE, has:compaction|error, cost>USD, tokens>N, trace:ID"
)


def arguments(p: ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="e.g. 'render_chart role:tool has:error'")
    p.add_argument("--limit", type=int, default=200, help="at most this many hits (200)")
    p.add_argument("--json", action="store_true")
    add_price_options(p)


def run(ctx: CliContext) -> int:
    from core.errors import InvalidInputError
    from core.inspector.recorded_time import shown
    from core.search.engine import search
    from core.search.query import parse

    query = parse(ctx.args.query)
    if query.empty:
        raise InvalidInputError("empty query: give words or a filter such as role:tool")
    if ctx.args.limit < 1:
        raise InvalidInputError("--limit must be at least 1")
    result = search(ctx.store(), query, ctx.args.limit, price_table(ctx.args))
    if ctx.args.json:
        ctx.emit_json(
            {
                "query": ctx.args.query,
                "hits": [h.to_json() for h in result.hits],
                "truncated": result.truncated,
                "indexed": result.indexed,
                "elapsed_ms": round(result.elapsed_ms, 1),
            }
        )
        return 0
    for h in result.hits:
        when = (
            shown(h.created_at, h.time_basis, "%Y-%m-%d %H:%M")
            if h.created_recorded
            else "undated".ljust(16)  # the trace's fill, not the message's time
        )
        where = "(trace)" if h.sequence is None else f"#{h.sequence} {h.role}"
        ctx.out.write(f"{h.trace_id[:16]}  {when}  {where:<16} {h.snippet or h.title}\n")
    more = " (more: raise --limit)" if result.truncated else ""
    ctx.out.write(f"-- {len(result.hits)} hits{more}\n")
    return 0
