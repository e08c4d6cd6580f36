"""``ctxlens export``: a trace as lossless JSON or as OTLP JSON (``gen_ai.*`` spans)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from app.cli import CliContext
from core.errors import CtxlensError

FORMATS = ("json", "otlp")


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="export a trace")
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--format", default="json", choices=FORMATS)
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    p.set_defaults(handler=run)


def run(ctx: CliContext) -> int:
    if ctx.args.format == "otlp":
        from core.exporters.otlp import write_export
    else:
        from core.exporters.ctxlens_json import write_export

    store = ctx.store()
    if not ctx.args.output:
        write_export(store, ctx.args.trace, ctx.out)
        return 0
    target = Path(ctx.args.output)
    if not target.parent.is_dir():
        raise CtxlensError(f"{target}: folder {target.parent} does not exist")
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".ctxlens-export-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            write_export(store, ctx.args.trace, f)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return 0
