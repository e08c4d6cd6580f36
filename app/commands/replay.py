"""``ctxlens replay``: re-run a stored trace offline with its recorded responses, from any
call, with other settings, into a new trace (``core/replay/rerun.py``)."""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli import CliContext

if TYPE_CHECKING:
    from core.replay.rerun import ReplayResult
    from core.store import Store


HELP = "re-run a trace with its recorded responses"
RUN_SETTINGS = True  # --set and the settings help (app/run_settings.py)


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument(
        "--from-call", type=int, default=0, metavar="N", help="re-run from main-agent call N"
    )
    p.add_argument(
        "--on-diverge",
        choices=("auto", "stop", "live"),
        default="auto",
        help="when a recorded reply no longer fits: stop, or go on with the offline model "
        "(auto: live for demo traces, stop otherwise)",
    )
    p.add_argument("--title", metavar="TEXT")
    p.add_argument("--compare", action="store_true", help="add a comparison with the source")
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    from core.inspector.rerun import input_tokens_text
    from core.replay.rerun import ReplayOptions, replay

    a = ctx.args
    store = ctx.store()
    opts = ReplayOptions(a.from_call, tuple(a.set), a.on_diverge, a.title)
    result = replay(store, a.trace, opts)
    return emit_rerun(
        ctx,
        store,
        result,
        result.to_json(),
        lambda out, where: (
            f"trace {out['trace_id']} (replay of {out['source_trace']} from call {a.from_call}): "
            f"{out['calls']} model calls, {out['compactions']} compactions, "
            f"{input_tokens_text(result)}, {where}; "
            f"redone tool calls {out['redone_tool_calls']}"
        ),
    )


def emit_rerun(
    ctx: CliContext,
    store: Store,
    result: ReplayResult,
    out: dict[str, Any],
    line: Callable[[dict[str, Any], str], str],
) -> int:
    """A re-run's report (``replay``, ``fork``): ``--compare`` adds the comparison with the
    source; ``--json`` prints ``out``, else one line (``line(out, where it diverged)``)."""
    if ctx.args.compare:
        from core.replay.compare import compare

        out["comparison"] = compare(store, result.source, result.trace_id).summary
    if ctx.args.json:
        ctx.emit_json(out)
        return 0
    div = out["divergence"]
    where = f"diverged at call {div['call_index']} ({div['reason']})" if div else "no divergence"
    ctx.out.write(line(out, where) + "\n")
    return 0
