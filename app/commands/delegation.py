"""``ctxlens delegation TRACE``: the delegation tree below a trace (issue 15's contract:
``{anchor: {sha256, chars}, trace_id, brief: {version, chars}, refs: [...], validator:
{chars, verdict}, children: [...]}``)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from app.cli import CliContext

HELP = "the delegation tree of a trace (anchor, briefs, refs)"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    from core.delegation.report import delegation_report

    store = ctx.store()
    tr = store.trace(ctx.args.trace)
    with store.read() as r:
        report = delegation_report(r, tr.id)
    if ctx.args.json:
        ctx.emit_json(report)
    else:
        _text(ctx, report, "")
    return 0


def _text(ctx: CliContext, node: dict[str, Any], indent: str) -> None:
    brief, val = node["brief"], node["validator"]
    held = [x for x in node["refs"] if x["dropped"] is None]
    ctx.out.write(
        f"{indent}{node['name']} {node['trace_id']}: anchor {node['anchor']['sha256'][:12]}, "
        f"brief v{brief['index']} {(brief['version'] or '')[:12]} ({brief['chars']} chars), "
        f"{len(held)} refs held, verdict {val['verdict'] or '-'}\n"
    )
    for child in node["children"]:
        _text(ctx, child, indent + "  ")
