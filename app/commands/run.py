"""``ctxlens run``: the same runtime against a real OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from app.cli import CliContext
from app.run_settings import add_parser


def register(sub: Any) -> None:
    p = add_parser(sub, "run", help="run a task against an OpenAI-compatible endpoint")
    p.add_argument("--base-url", required=True, metavar="URL", help="e.g. http://host/v1")
    p.add_argument("--model", required=True, metavar="NAME")
    p.add_argument("--fallback-model", metavar="NAME")
    p.add_argument("--task", required=True, metavar="TEXT")
    p.add_argument("--trace", metavar="ID", help="continue this trace (default: a new one)")
    p.add_argument("--window", type=int, default=128_000)
    p.add_argument("--compaction", choices=("ctxlens", "naive", "none"), default="ctxlens")
    p.add_argument("--max-steps", type=int, default=50, help="most model calls")
    p.add_argument("--skill", action="append", default=[], help="inject a skill (repeatable)")
    p.add_argument("--demo-tools", action="store_true", help="offer the demo world's tools")
    p.add_argument("--no-stream", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


def run(ctx: CliContext) -> int:
    a = ctx.args
    result = asyncio.run(_run(ctx))
    if a.json:
        ctx.emit_json(result)
    else:
        ctx.out.write(json.dumps(result, indent=2) + "\n")
    for error in result["run_errors"]:
        print(f"ctxlens run: error: {error}", file=sys.stderr)
    return 0 if result["stopped"] == "done" else 1


async def _run(ctx: CliContext) -> dict[str, Any]:
    from core.demo.tools import demo_slimmers, demo_tools
    from core.demo.world import World
    from core.llm import ChatClient, ModelCompactionSummarizer, ModelSettings
    from core.run.config import RunConfig
    from core.run.live import DEMO_TOOLS
    from core.run.runner import Runner
    from core.run.tools import ToolRegistry

    a = ctx.args
    store = ctx.store(create=True)
    settings = ModelSettings.resolve(
        base_url=a.base_url,
        model=a.model,
        fallback_model=a.fallback_model,
        stream=not a.no_stream,
    )
    config = RunConfig(
        model=a.model,
        fallback_model=settings.fallback_model,
        window=a.window,
        compaction=a.compaction,
        max_steps=a.max_steps,
        inject_skills=tuple(a.skill),
        stream=not a.no_stream,
        extra={"tools": DEMO_TOOLS} if a.demo_tools else {},  # so the GUI can continue it
    ).with_settings(a.set)
    trace_id = a.trace and store.trace(a.trace).id
    if not trace_id:
        trace_id = store.create_trace(a.task[:80], source="ctxlens").id
    with store.write() as w:  # what `ctxlens resume` needs to continue it (never the key)
        meta = w.read.trace(trace_id).metadata or {}
        run = {"base_url": _public(settings.base_url), "demo_tools": bool(a.demo_tools)}
        w.update_trace_metadata(trace_id, {**meta, "run": run})
    world = World()
    tools = demo_tools(world) if a.demo_tools else ToolRegistry()
    async with ChatClient(settings) as client:
        runner = Runner(
            store,
            trace_id,
            client,
            config,
            tools=tools,
            slimmers=demo_slimmers() if a.demo_tools else None,
            summarizer=ModelCompactionSummarizer(client),
        )
        await runner.start_turn(a.task)
        outcome = await runner.run()
    with store.read() as r:
        calls = r.llm_calls(trace_id)
        compactions = r.compactions(trace_id)
    return {
        "trace_id": trace_id,
        "llm_calls": len(calls),
        "tool_calls": outcome.tool_calls,
        "compactions": len(compactions),
        "errors": [c.error for c in calls if c.error],
        "final": outcome.final,
        "stopped": outcome.stopped,
        "run_errors": outcome.errors,
    }


def _public(url: str) -> str:
    """The URL without user:password@ (credentials never enter the store)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc)) if parts.netloc else url
