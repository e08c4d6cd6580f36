"""``ctxlens traces``: the traces in the store, with model, start, duration, calls, tokens."""

from __future__ import annotations

import time
from typing import Any

from app.cli import CliContext
from core.inspect.trace_list import summaries


def register(sub: Any) -> None:
    p = sub.add_parser("traces", help="list the traces in the store")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run)


def run(ctx: CliContext) -> int:
    with ctx.store().read() as r:
        rows = summaries(r)
    if ctx.args.json:
        ctx.emit_json([s.to_json() for s in rows])
        return 0
    for s in rows:
        t = s.trace
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.start))
        ctx.out.write(
            f"{t.id}  {when}  {t.source:<12} {t.messages:>8} msgs {s.calls:>5} calls  "
            f"{s.model or '-':<24} {t.title}\n"
        )
    return 0
