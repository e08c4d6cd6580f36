"""Running the demo: the scripted model served over real HTTP on 127.0.0.1, the runtime
in front of it, and the metrics of the resulting trace (``ctxlens demo``).

The user's constraint ("every conclusion must cite an evidence window") arrives mid-run once
the third entity is done, as a user would interrupt a long run (``constrain_after``, a
``step_complete`` hook, so stepping the demo in the GUI records the same trace).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from core.demo.options import DemoOptions as DemoOptions
from core.demo.options import demo_options as demo_options
from core.demo.script import main_script, verifier_script
from core.demo.tools import demo_slimmers, demo_tools
from core.demo.world import World
from core.errors import InvalidInputError
from core.exporters.ctxlens_json import export_text
from core.llm import ChatClient, ModelCompactionSummarizer, ModelServer, ScriptedModel
from core.run.config import RunConfig
from core.run.events import EventBus
from core.run.metrics import compute
from core.run.runner import Runner
from core.store import Store

TASK = (
    "Analyse 30 days of events over 500,000 entities and output the top 10 risk entities, "
    "each with evidence-window references."
)
CONSTRAINT = "every conclusion must cite an evidence window (win-NNNN)"
STRATEGY_SKILL = "risk_analysis_strategy"


def demo_config(opts: DemoOptions) -> RunConfig:
    return RunConfig(
        model="scripted",
        window=opts.window if opts.compaction != "none" else 10_000_000,
        threshold=0.6,
        compaction=opts.compaction,  # type: ignore[arg-type]
        snip_max_messages=80,
        inject_skills=(STRATEGY_SKILL,),
        skill_recency_threshold=40,
        max_steps=opts.steps,
        stream=opts.stream,
        soft_limit=int(opts.window * 0.45),
        hard_limit=int(opts.window * 0.7),
        checkpoint_rounds=5,  # a round checkpoint costs ~6 ms: 38 % of this instant model's run
    ).with_settings(list(opts.settings))


def make_model(world: World) -> ScriptedModel:
    return ScriptedModel(main_script(world), verifier_script(world))


def create_demo_trace(store: Store, opts: DemoOptions) -> str:
    """A new, empty demo trace whose metadata says how to run it (``open_demo_run``)."""
    demo_config(opts)  # bad settings fail here, before a trace exists
    title = opts.title or f"Demo: top-10 risk analysis ({opts.compaction}, {opts.window} tokens)"
    demo = {
        "window": opts.window,
        "compaction": opts.compaction,
        "seed": opts.seed,
        "steps": opts.steps,
        "stream": opts.stream,
        **({"settings": list(opts.settings)} if opts.settings else {}),
    }
    return store.create_trace(title, source="ctxlens-demo", metadata={"demo": demo}).id


@asynccontextmanager
async def open_demo_run(
    store: Store, trace_id: str, events: EventBus | None = None
) -> AsyncIterator[Runner]:
    """A Runner for a demo trace, with its scripted model served on 127.0.0.1 for as long
    as the context is open (the GUI steps it; ``run_demo`` drives it to the end)."""
    opts = demo_options(store.trace(trace_id).metadata)
    if opts is None:
        raise InvalidInputError(f"trace {trace_id} is not a demo trace")
    world = World(opts.seed)
    with ModelServer(make_model(world)) as server:
        async with ChatClient(server.settings(model="scripted", stream=opts.stream)) as client:
            runner = Runner(
                store,
                trace_id,
                client,
                demo_config(opts),
                tools=demo_tools(world),
                slimmers=demo_slimmers(),
                summarizer=ModelCompactionSummarizer(client),
                events=events,
                wall_clock=demo_clock(),
            )
            constrain_after(runner)
            yield runner


async def run_demo_async(
    store: Store, opts: DemoOptions, events: EventBus | None = None
) -> dict[str, Any]:
    trace_id = create_demo_trace(store, opts)
    async with open_demo_run(store, trace_id, events) as runner:
        await drive(runner)
    return summarize_run(store, trace_id)


def demo_clock(ticks: int = 0) -> Any:
    """Deterministic wall time for injected context (identical runs → identical traces):
    one second per reading, starting after ``ticks`` readings (a resumed or replayed run
    continues where the recorded one stood)."""
    t = [1_790_000_000.0 + ticks]

    def now() -> float:
        t[0] += 1.0
        return t[0]

    return now


async def drive(runner: Runner, *, start: bool = True) -> None:
    """Run the turn to the end (the user's constraint arrives through ``constrain_after``,
    which ``open_demo_run`` installs). ``start=False`` continues a turn already open."""
    if start:
        await runner.start_turn(TASK)
    await runner.run()


def constrain_after(runner: Runner, goal_id: str = "3.3") -> None:
    """The demo's user adds ``CONSTRAINT`` once goal ``goal_id`` (the third entity) is
    completed, before the next context is prepared — however the runner is driven
    (``drive``, the GUI's Step and Run). Hooked on ``step_complete``, the end of a round's
    bookkeeping, which is exactly the point before the next PREPARE."""
    added = [_has_constraint(runner)]

    def check(_payload: dict[str, Any]) -> None:
        goal = runner.goals.get(goal_id)
        due = goal is not None and goal.status == "completed" and runner.final is None
        if due and not added[0]:
            runner.add_constraint(CONSTRAINT)
            added[0] = True

    runner.hooks.on("step_complete", check)


def _has_constraint(runner: Runner) -> bool:
    return constraint_given(runner.store, runner.trace_id)


def constraint_given(store: Store, trace_id: str) -> bool:
    """Whether the main path already carries the user's constraint."""
    with store.read() as r:
        found = r.search(trace_id, text=CONSTRAINT, role="user")
        if not found:
            return False
        on_path = set(r.main_path_sequences(trace_id))
    return any(seq in on_path for seq in found)


def summarize_run(store: Store, trace_id: str) -> dict[str, Any]:
    metrics = compute(json.loads(export_text(store, trace_id)))
    return {
        "trace_id": trace_id,
        "llm_calls": metrics["llm_calls"],
        "tool_calls": metrics["tool_calls"],
        "compactions": metrics["compaction_layers"],
        "compaction_events": metrics["compactions"],
        "redone_tool_calls": metrics["redone_tool_calls"],
        "cumulative_input_tokens": metrics["cumulative_input_tokens"],
        "prefix_cache_reuse": metrics["prefix_cache_reuse"],
        "main_llm_calls": metrics["main_llm_calls"],
    }


def run_demo(store: Store, opts: DemoOptions) -> dict[str, Any]:
    return asyncio.run(run_demo_async(store, opts))
