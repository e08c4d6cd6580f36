"""``ctxlens traces``: the traces in the store.

A local store file at the current schema is read with ``sqlite3`` alone
(``core/store/quick.py``): listing traces is start-up bound, SQLAlchemy would dominate.
"""

from __future__ import annotations

from typing import Any

from app.cli import CliContext


def register(sub: Any) -> None:
    p = sub.add_parser("traces", help="list the traces in the store")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)


def listing(ctx: CliContext) -> list[dict[str, Any]]:
    """``[{id, title, source, created_at, messages, head}]``, oldest first."""
    from core.store.quick import list_traces

    quick = list_traces(ctx.db)
    if quick is not None:
        return quick
    return [
        {
            "id": t.id,
            "title": t.title,
            "source": t.source,
            "created_at": t.created_at,
            "messages": t.messages,
            "head": t.head,
        }
        for t in ctx.store().traces()
    ]


def run(ctx: CliContext) -> int:
    traces = listing(ctx)
    if ctx.args.json:
        ctx.emit_json(traces)
        return 0
    import time

    for t in traces:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(t["created_at"]))
        line = f"{t['id']}  {when}  {t['source']:<12} {t['messages']:>8} msgs  {t['title']}"
        ctx.out.write(line + "\n")
    return 0
