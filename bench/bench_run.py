"""Run-loop benchmarks (issue 4): the 150-step demo under ctxlens / none / naive, and the
runtime's own overhead per step at a 10k-message history (model latency excluded)."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench import figure
from bench.synth import synthetic_messages

GOAL_INPUT = "ratio <= 0.45 (ctxlens cumulative input vs compaction none)"
GOAL_NAIVE = "informational (the naive strategy vs none, beside ctxlens's judged ratio)"
GOAL_REUSE = ">= 0.9 (prefix-cache reuse; baseline: naive's)"
GOAL_REDO = "== 0 calls (redone tool calls with ctxlens; baseline: naive's)"
GOAL_CALLS = "informational (model calls of the demo; baseline: naive's)"
GOAL_STEP = "<= 2 ms (runtime overhead per step at a 10k-message history, model excluded)"
GOAL_STEP_CPU = "informational (the same steps' CPU: what load on a shared machine distorts least)"


def _demo(mode: str, steps: int) -> dict[str, Any]:
    from core.demo.scenario import DemoOptions, run_demo
    from core.store import Store

    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "d.db") as store:
        t0 = time.perf_counter()
        result = run_demo(store, DemoOptions(steps=steps, compaction=mode))
        result["seconds"] = time.perf_counter() - t0
        return result


class InstantModel:
    """An in-process model port: answers at once with one cheap tool call."""

    def __init__(self) -> None:
        self.n = 0
        self.seconds = 0.0

    async def complete(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> Any:
        from core.llm.response import ModelResponse
        from core.records import ToolCall

        t0 = time.perf_counter()
        self.n += 1
        call = ToolCall(f"c{self.n}", "noop", json.dumps({"i": self.n}))
        resp = ModelResponse(
            text="",
            tool_calls=(call,),
            usage=None,
            model="instant",
            latency_ms=0.0,
            finish_reason="tool_calls",
        )
        self.seconds += time.perf_counter() - t0
        return resp


def _overhead(history: int, steps: int) -> tuple[float, float]:
    """(wall, CPU) seconds per step, the instant model's time taken out of both."""
    from core.records import NewMessage
    from core.run.config import RunConfig
    from core.run.runner import Runner
    from core.run.tools import Tool, ToolRegistry, ToolResult
    from core.store import Store

    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "o.db") as store:
        trace = store.create_trace("overhead")
        with store.write() as w:
            w.append(
                trace.id,
                [NewMessage("system", "You are a test agent."), NewMessage("user", "work")],
            )
            w.append(trace.id, synthetic_messages(0, history))
        tools = ToolRegistry().extend(
            [Tool("noop", "Nothing.", {"type": "object"}, lambda a, c: ToolResult("ok"))]
        )
        model = InstantModel()
        config = RunConfig(
            compaction="none",
            window=10_000_000,
            injection_interval=0,
            checkpoints=False,
            max_steps=10_000,
        )
        runner = Runner(store, trace.id, model, config, tools=tools)

        async def go() -> tuple[float, float]:
            await runner.start_turn("continue")
            await runner.run(max_steps=4)  # warm caches
            t0, c0 = time.perf_counter(), time.process_time()
            model.seconds = 0.0
            done = 0
            while done < steps:
                await runner.step()
                done += 1
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            return (wall - model.seconds) / steps, (cpu - model.seconds) / steps

        return asyncio.run(go())


def run(quick: bool = False, smoke: bool = False) -> Iterator[dict[str, Any]]:
    steps = 20 if smoke else 60 if quick else 150
    results = {mode: _demo(mode, steps) for mode in ("ctxlens", "none", "naive")}
    ours, none, naive = results["ctxlens"], results["none"], results["naive"]
    yield figure(
        "run",
        "demo_cumulative_input_tokens",
        ours["cumulative_input_tokens"],
        "tokens",
        GOAL_INPUT,
        baseline=none["cumulative_input_tokens"],
    )
    yield figure(
        "run",
        "naive_cumulative_input_tokens",
        naive["cumulative_input_tokens"],
        "tokens",
        GOAL_NAIVE,
        baseline=none["cumulative_input_tokens"],
    )
    yield figure(
        "run",
        "demo_prefix_cache_reuse",
        ours["prefix_cache_reuse"],
        "ratio",
        GOAL_REUSE,
        baseline=naive["prefix_cache_reuse"],
    )
    yield figure(
        "run",
        "demo_redone_tool_calls",
        ours["redone_tool_calls"],
        "calls",
        GOAL_REDO,
        baseline=naive["redone_tool_calls"],
    )
    yield figure(
        "run", "demo_llm_calls", ours["llm_calls"], "calls", GOAL_CALLS, baseline=naive["llm_calls"]
    )
    timed = 10 if smoke else 40 if quick else 120
    per_round = _overhead(1_000 if smoke else 10_000, timed)
    small = _overhead(100, timed)
    yield figure(
        "run",
        "overhead_per_step_10k_history",
        per_round[0] * 1000,
        "ms",
        GOAL_STEP,
        baseline=small[0] * 1000,
    )
    yield figure(
        "run",
        "overhead_cpu_per_step_10k_history",
        per_round[1] * 1000,
        "ms of CPU",
        GOAL_STEP_CPU,
        baseline=small[1] * 1000,
    )
