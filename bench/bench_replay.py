"""Replay benchmarks (issue 9): scrubbing a demo trace call by call, a replay with the
recorded responses against the original run, the cost of round checkpoints, a comparison.

Baselines are measured in the same run: the inspector's per-call context report for the
scrubber, the original demo run for the replay and for round checkpoints (a run with them
off)."""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import figure

GOAL_SCRUB = "< 50 ms (playback state per call on the demo trace)"
GOAL_REPLAY = "ratio <= 1.3 (replay with recorded responses vs the original run's time)"
GOAL_REPRODUCED = "== baseline (every recorded call reproduced)"
GOAL_ROUND_MS = "<= 10 ms (one round checkpoint; the demo's model answers at once)"
GOAL_ROUNDS = {
    1: "informational (a checkpoint every round is not the demo's setting; every 5 is judged)",
    5: "<= 0.1 (share of the run's time in round checkpoints every 5 rounds, the demo's setting)",
}
GOAL_FRAME = "< 50 ms (a playback frame for the window: state + pane rows; off the UI thread)"
GOAL_COMPARE = "< 2 s (comparison of a demo and its replay)"


def _demo(store: Any, rounds: int = 1, steps: int | None = None) -> tuple[str, float]:
    import core.demo.scenario as scenario

    base = scenario.demo_config

    def config(opts: Any) -> Any:
        return dataclasses.replace(base(opts), checkpoint_rounds=rounds)

    scenario.demo_config = config
    try:
        t0 = time.perf_counter()
        options = scenario.DemoOptions() if steps is None else scenario.DemoOptions(steps=steps)
        result = scenario.run_demo(store, options)
        return str(result["trace_id"]), time.perf_counter() - t0
    finally:
        scenario.demo_config = base


def _scrub(store: Any, trace_id: str) -> tuple[float, float, float]:
    """Mean and 95th percentile of ``Playback.state`` per call; the inspector's call report
    (what the context pane computes per call anyway) as the baseline."""
    from core.inspector.context_report import call_report
    from core.replay.playback import Playback

    with store.read() as r:
        pb = Playback.open(r, trace_id)
        pb.state(r, 0)  # warm the token counter
        times = []
        for n in range(len(pb)):
            t0 = time.perf_counter()
            pb.state(r, n)
            times.append(time.perf_counter() - t0)
        base = []
        for call in r.llm_calls(trace_id):
            t0 = time.perf_counter()
            call_report(r, call)
            base.append(time.perf_counter() - t0)
    p95 = sorted(times)[int(len(times) * 0.95)]
    return statistics.mean(times), p95, statistics.mean(base)


def _frames(store: Any, trace_id: str) -> float:
    """Mean time of ``PlaybackFrames.frame`` (what the window computes per scrub: the state
    plus goal outline, skill and grant rows) over the scrubber's stops."""
    from core.inspector.playback import PlaybackFrames

    with store.read() as r:
        frames = PlaybackFrames.open(r, trace_id)
        frames.frame(r, 0)
        times = []
        for stop in range(len(frames.stops)):
            t0 = time.perf_counter()
            frames.frame(r, stop)
            times.append(time.perf_counter() - t0)
    return statistics.mean(times)


def run(quick: bool = False, smoke: bool = False) -> Iterator[dict[str, Any]]:
    from core.replay.compare import compare
    from core.replay.rerun import replay
    from core.store import Store

    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "r.db") as store:
        trace_id, run_s = _demo(store, steps=20 if smoke else None)
        mean, p95, base = _scrub(store, trace_id)
        yield figure("replay", "scrub_per_call_mean", mean * 1000, "ms", GOAL_SCRUB, base * 1000)
        yield figure("replay", "scrub_per_call_p95", p95 * 1000, "ms", GOAL_SCRUB, base * 1000)
        frame = _frames(store, trace_id)
        yield figure("replay", "playback_frame_mean", frame * 1000, "ms", GOAL_FRAME, mean * 1000)
        t0 = time.perf_counter()
        result = replay(store, trace_id)
        replay_s = time.perf_counter() - t0
        yield figure("replay", "replay_seconds", replay_s, "s", GOAL_REPLAY, baseline=run_s)
        yield figure(
            "replay",
            "replay_reproduced_calls",
            result.reproduced_calls,
            "calls",
            GOAL_REPRODUCED,
            baseline=result.calls,
        )
        t0 = time.perf_counter()
        compare(store, trace_id, result.trace_id)
        yield figure("replay", "compare_seconds", time.perf_counter() - t0, "s", GOAL_COMPARE)
        if quick:
            return
        for rounds, share_goal in GOAL_ROUNDS.items():
            count, spent, total = _round_cost(store, rounds)
            yield figure(
                "replay",
                f"round_checkpoint_ms_every_{rounds}",
                spent / max(count, 1) * 1000,
                "ms",
                GOAL_ROUND_MS,
            )
            yield figure(
                "replay",
                f"round_checkpoint_share_every_{rounds}",
                spent / total,
                "ratio",
                share_goal,
            )


def _round_cost(store: Any, rounds: int) -> tuple[int, float, float]:
    """(round checkpoints written, seconds inside them, seconds of the whole demo run):
    timed inside ``Runner.checkpoint``, so the load of a shared machine cancels out."""
    from core.run.runner import Runner

    original = Runner.checkpoint
    spent = [0, 0.0]

    def timed(self: Runner, kind: str) -> None:
        t0 = time.perf_counter()
        original(self, kind)
        if kind == "round":
            spent[0] += 1
            spent[1] += time.perf_counter() - t0

    Runner.checkpoint = timed  # type: ignore[method-assign]
    try:
        total = _demo(store, rounds)[1]
    finally:
        Runner.checkpoint = original  # type: ignore[method-assign]
    return int(spent[0]), float(spent[1]), total
