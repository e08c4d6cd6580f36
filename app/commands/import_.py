"""``ctxlens import``: traces written by ctxlens and other agent tools (core.importers)."""

from __future__ import annotations

import sys
import threading
from argparse import ArgumentParser

from app.cli import CliContext

FORMAT_CHOICES = (
    "auto",
    "claude-code",
    "codex",
    "otel",
    "inspect",
    "openhands",
    "swe-agent",
    "openai",
    "ctxlens",
)


HELP = "import trace files or folders into the store"
DESCRIPTION = """Import traces. A folder imports every trace it holds; each file of it that is
not imported is named on stderr with the reason ("skipped: ..."). Files already imported
(same content) are reported, not duplicated."""


def arguments(p: ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--format", default="auto", choices=FORMAT_CHOICES)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(ctx: CliContext) -> int:
    from app.stop_signals import stop_on_signals
    from core.importers.api import import_counted, plan_paths

    planned = plan_paths(ctx.args.paths, ctx.args.format)  # bad paths fail before any write
    store = ctx.store(create=True)
    with stop_on_signals(threading.Event()) as stop:  # Ctrl-C: roll back the file being read
        results = import_counted(
            store,
            ctx.args.paths,
            ctx.args.format,
            stop_on_error=False,
            units=planned.units,
            cancel=stop,
        )
    done = [r for r in results if r.error is None]
    failed = [r for r in results if r.error is not None]
    for r in failed:
        print(f"ctxlens: error: {r.error}", file=sys.stderr)
    for s in planned.skipped:  # stdout keeps one row per trace (text and --json)
        print(f"ctxlens: skipped: {s.reason}", file=sys.stderr)
    if ctx.args.json:
        ctx.emit_json([r.to_json() for r in done])
    else:
        for r in done:
            state = "already imported as" if r.duplicate else "->"
            ctx.out.write(
                f"{r.path}: {r.format} {state} {r.trace_id} ({r.messages} messages, "
                f"{r.tool_calls} tool calls, {r.compactions} compactions, "
                f"{r.subagents} subagents)\n"
            )
            for w in r.warnings:
                ctx.out.write(f"  warning: {w}\n")
    if stop.is_set():
        kept = sum(1 for r in done if not r.duplicate)
        print(
            f"ctxlens: interrupted: {kept} trace(s) imported before it are kept (listed "
            "above); the file being read was rolled back, nothing of it is stored",
            file=sys.stderr,
        )
        return 130
    return 2 if failed else 0
