"""``ctxlens export``: a trace as lossless JSON or as OTLP JSON (``gen_ai.*`` spans)."""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from typing import Any

from app.cli import CliContext

FORMATS = ("json", "otlp")


HELP = "export a trace"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--format", default="json", choices=FORMATS)
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")


def run(ctx: CliContext) -> int:
    from core.inspector.export import export_file, writer

    store = ctx.store()
    if not ctx.args.output:
        writer(ctx.args.format)(store, ctx.args.trace, ctx.out)
    else:
        export_file(store, ctx.args.trace, ctx.args.format, ctx.args.output)
    _warn_missing(store, ctx.args.trace)
    return 0


def _warn_missing(store: Any, trace_id: str) -> None:
    """A lost checkpoint blob does not stop an export; the user is told which ones."""
    for cp in store.missing_blobs(trace_id):
        print(
            f"warning: checkpoint {cp.generation} ({cp.type}) of trace {cp.trace_id}: blob "
            f"{cp.object_key} is missing from {store.objects.describe()}; exported without it",
            file=sys.stderr,
        )
