"""``ctxlens resume``: continue a killed or stopped run in a new process from its latest
(or a chosen) checkpoint, without redoing completed steps (``core/replay/resume.py``)."""

from __future__ import annotations

from argparse import ArgumentParser

from app.cli import CliContext

HELP = "continue a run from its checkpoint"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--checkpoint", type=int, metavar="GEN", help="checkpoint generation")
    p.add_argument(
        "--rewind",
        action="store_true",
        help="resume from an older checkpoint than the latest (later messages become a branch)",
    )
    p.add_argument("--base-url", metavar="URL", help="endpoint of a `ctxlens run` trace")
    p.add_argument("--model", metavar="NAME")
    p.add_argument("--max-steps", type=int, metavar="N", help="most model calls from here")
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    from core.replay.resume import ResumeOptions, resume

    a = ctx.args
    opts = ResumeOptions(a.checkpoint, a.rewind, a.base_url, a.model, a.max_steps)
    result = resume(ctx.store(), a.trace, opts)
    out = result.to_json()
    if a.json:
        ctx.emit_json(out)
    elif result.status == "finished":
        ctx.out.write(f"trace {result.trace_id}: already finished; nothing to resume\n")
    else:
        ctx.out.write(
            f"trace {result.trace_id}: resumed from checkpoint {result.resumed_from} "
            f"({result.checkpoint_type}) as generation {result.generation}; "
            f"{result.calls} model calls, {result.pending_tools} interrupted tool call(s) "
            f"finished first; stopped: {result.stopped}; redone tool calls "
            f"{out['redone_tool_calls']}\n"
        )
    return 0 if result.stopped in ("done", "") else 1
