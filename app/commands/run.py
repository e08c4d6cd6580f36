"""``ctxlens run``: the same runtime against a real OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from typing import Any

from app.cli import CliContext

HELP = "run a task against an OpenAI-compatible endpoint"
RUN_SETTINGS = True  # --set and the settings help (app/run_settings.py)


def arguments(p: ArgumentParser) -> None:
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
    p.add_argument(
        "--anchor",
        metavar="FILE.json",
        help="start a recursive delegation root with this RootTaskAnchor "
        "({objective, completion_criteria, constraints}); offers agent() and read_context_ref",
    )
    p.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="longest one model call may take in all (default 600, CTXLENS_CALL_DEADLINE_S)",
    )
    p.add_argument(
        "--system",
        metavar="TEXT|@FILE",
        help="the system prompt of a new trace; it wins over --set system_prompt, "
        "preset_prompt and the default identity (INJ-1)",
    )
    p.add_argument(
        "--feed",
        action="append",
        default=[],
        metavar="NAME=TEXT|@FILE",
        help="a source of the periodic context (INJ-2), a file re-read at every injection "
        "(repeatable): collaborators (JSON [{name, status, detail}] or lines "
        "'name: status[: detail]'), notifications (one per line), or any other NAME as "
        "its own '## NAME' section",
    )
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    import asyncio

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
    from core.run.feeds import Feed, feed_sources
    from core.run.rerunners import DEMO_TOOLS
    from core.run.task_run import public_url
    from core.run.tools import ToolRegistry

    a = ctx.args
    anchor = _anchor(a.anchor)  # checked before anything is written
    given = _given_messages(a.system)
    feeds = feed_sources([Feed.parse(spec) for spec in a.feed])
    store = ctx.store(create=True)
    settings = ModelSettings.resolve(
        base_url=a.base_url,
        model=a.model,
        fallback_model=a.fallback_model,
        stream=not a.no_stream,
        deadline_s=a.deadline,
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
        run = {
            **settings.public_dict(),  # model, fallback, timeouts, has_api_key: never the key
            "base_url": public_url(settings.base_url),
            "demo_tools": bool(a.demo_tools),
        }
        w.update_trace_metadata(trace_id, {**meta, "run": run})
    world = World()
    tools = demo_tools(world) if a.demo_tools else ToolRegistry()
    runner_class, extra = _delegation(store, trace_id, anchor)
    async with ChatClient(settings) as client:
        runner = runner_class(
            store,
            trace_id,
            client,
            config,
            tools=tools,
            slimmers=demo_slimmers() if a.demo_tools else None,
            summarizer=ModelCompactionSummarizer(client),
            context=feeds,
            **extra,
        )
        await runner.start_turn(a.task, given)
        outcome = await runner.run()
    with store.read() as r:
        calls = r.llm_calls(trace_id)
        compactions = r.compactions(trace_id)
        events = r.table_rows("run_events", trace_id)
    return {
        "trace_id": trace_id,
        "llm_calls": len(calls),
        "tool_calls": outcome.tool_calls,
        "compactions": len(compactions),
        "errors": [c.error for c in calls if c.error],
        "breaker": [e["payload"] for e in events if e["type"] == "breaker"],
        "final": outcome.final,
        "stopped": outcome.stopped,
        "run_errors": outcome.errors,
    }


def _given_messages(system: str | None) -> list[dict[str, str]]:
    """``--system`` as the run request's system message (first in INJ-1's chain)."""
    if system is None:
        return []
    from core.run.feeds import text_or_file

    return [{"role": "system", "content": text_or_file(system, "--system")}]


def _anchor(path: str | None) -> Any:
    if path is None:
        return None
    from core.delegation.anchor import normalize_anchor
    from core.delegation.anchor_file import read_anchor_file
    from core.delegation.normal import DelegationError

    raw = read_anchor_file(path)  # its errors name the file
    try:
        return normalize_anchor(raw)
    except DelegationError as exc:
        raise DelegationError(f"{path}: {exc}") from None


def _delegation(store: Any, trace_id: str, anchor: Any) -> tuple[Any, dict[str, Any]]:
    """The runner class and its extra arguments: with ``--anchor`` a delegating root (a new
    one, or the same root continued; a root's anchor never changes)."""
    from core.run.runner import Runner

    if anchor is None:
        return Runner, {}
    from core.delegation.normal import DelegationError
    from core.delegation.runner import DelegatingRunner
    from core.delegation.runtime import DelegationSettings, start_root
    from core.delegation.store import node

    with store.read() as r:
        here = node(r, trace_id)
    if here is None:
        start_root(store, trace_id, anchor.to_json())
    elif here.anchor_sha256 != anchor.sha256 or here.depth:
        raise DelegationError(f"trace {trace_id} already has another anchor; it cannot change")
    return DelegatingRunner, {"delegation": DelegationSettings()}
