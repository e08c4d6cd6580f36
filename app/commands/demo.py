"""``ctxlens demo``: run the demo scenario (seed C's 30-day risk analysis) offline."""

from __future__ import annotations

from argparse import ArgumentParser

from app.cli import CliContext

HELP = "run the demo scenario against the scripted model"
RUN_SETTINGS = True  # --set and the settings help (app/run_settings.py)


def arguments(p: ArgumentParser) -> None:
    p.add_argument("--steps", type=int, default=200, help="most model calls (default 200)")
    p.add_argument("--window", type=int, default=16_000, help="context window in tokens")
    p.add_argument(
        "--compaction",
        choices=("ctxlens", "naive", "none"),
        default="ctxlens",
        help="ctxlens = the full engine; naive = newest messages that fit; none = unlimited",
    )
    p.add_argument("--seed", type=int, default=7, help="seed of the synthetic world")
    p.add_argument("--no-stream", action="store_true", help="plain (non-SSE) model calls")
    p.add_argument(
        "--scenario",
        choices=("risk", "delegation"),
        default="risk",
        help="risk = the 30-day risk analysis; delegation = a recursive delegation tree",
    )
    p.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=N",
        help="a delegation limit (anchor_chars, brief_chars, refs_per_trace, snapshot_chars, "
        "ref_chars_total, validator_chars, max_depth); repeatable",
    )
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    from core.demo.scenario import DemoOptions, run_demo
    from core.errors import InvalidInputError

    a = ctx.args
    if a.scenario == "delegation":
        return _delegation(ctx)
    if a.steps < 1 or a.window < 1000:
        raise InvalidInputError("--steps must be ≥ 1 and --window ≥ 1000 tokens")
    opts = DemoOptions(
        a.steps, a.window, a.compaction, a.seed, not a.no_stream, settings=tuple(a.set)
    )
    result = run_demo(ctx.store(create=True), opts)
    if a.json:
        ctx.emit_json(result)
    else:
        c = ", ".join(f"{k} {v}" for k, v in result["compactions"].items()) or "none"
        ctx.out.write(
            f"trace {result['trace_id']}: {result['llm_calls']} model calls, "
            f"{result['tool_calls']} tool calls, compactions: {c}; redone tool calls "
            f"{result['redone_tool_calls']}; input tokens {result['cumulative_input_tokens']:,}; "
            f"prefix-cache reuse {result['prefix_cache_reuse']:.1%}\n"
        )
    return 0


def _delegation(ctx: CliContext) -> int:
    from core.delegation.config import DEFAULT_LIMITS
    from core.demo.delegation import run_delegation

    limits = DEFAULT_LIMITS.with_pairs(ctx.args.limit)
    result = run_delegation(ctx.store(create=True), limits)
    if ctx.args.json:
        ctx.emit_json(result)
    else:
        ctx.out.write(f"trace {result['trace_id']}: delegation tree ({result['stopped']})\n")
        ctx.out.write(f"see: ctxlens delegation {result['trace_id']}\n")
    return 0
