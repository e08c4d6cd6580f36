"""Injection and refs overhead: the per-step decisions at a 10k-item context, slimming.

Figures:
- ``prepare_step_ms``: skill re-injection decision (3 skills, 60 records) + nudge monitors +
  periodic decision on a 10,000-item context; baseline = one bare pass over the items.
  Goal: well under the run loop's 2 ms per-step overhead budget (issue 4).
- ``slim_1mb_json_ms`` and ``slim_context_share``: slimming a ~1 MB JSON tool output;
  baseline = counting its tokens once (any runtime must do at least that).
- ``image_replacement_ms``: ``replace_old_images`` over 10,000 items holding 40 images.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench import figure
from core.context.nudges import StepMonitors
from core.context.periodic import periodic_decision
from core.context.skill_injection import skills_to_inject
from core.context.view import View
from core.records import ContextItem, Message, SkillInjection
from core.refs.images import replace_old_images
from core.refs.slimming import SlimPolicy, ToolOutput, slim_tool_output
from core.tokens import default_counter

BENCH = "injection"
GOAL_SLIM = "ratio <= 2 (slimming vs counting its tokens once)"


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def _message(seq: int, image: bool) -> Message:
    parts = (
        ({"type": "text", "text": "chart"}, {"type": "image_url", "image_url": {"url": "u"}})
        if image
        else None
    )
    return Message(
        "t",
        seq,
        seq - 1 if seq else None,
        "user",
        "chart" if image else f"m{seq}",
        parts,
        (),
        None,
        None,
        None,
        "message",
        None,
        None,
        "main",
        5,
        None,
        0.0,
        None,
    )


def run(quick: bool = False) -> Iterator[dict[str, Any]]:
    n = 2_000 if quick else 10_000
    repeat = 5 if quick else 30
    items = tuple(ContextItem(s) for s in range(n))
    records = [SkillInjection("t", f"s{i % 3}", (i * 97) % n, None, "caller") for i in range(60)]
    monitors = StepMonitors()

    def prepare() -> None:
        skills_to_inject(["s0", "s1", "s2"], items, records, 10)
        monitors.before_model_call(20_000, (300, ["query"]))
        periodic_decision(n, branch_type=None, round_tool_names=["query"])

    bare = _best(lambda: [i.sequence for i in items], repeat)
    yield figure(BENCH, "prepare_step_ms", _best(prepare, repeat), "ms", "<= 2 ms", bare)

    rows = [
        {"id": i, "entity": f"e{i % 5000}", "score": i * 0.5}
        for i in range(20_000 if quick else 40_000)
    ]
    raw = json.dumps({"events": rows, "total": len(rows)})
    counter = default_counter()
    variants = iter(range(10**6))

    def fresh() -> str:  # a text the token memo has never seen: honest, uncached timings
        return raw + " " * (next(variants) + 1)

    count_ms = _best(lambda: counter.count_uncached(fresh()), 3)
    slim_ms = _best(lambda: slim_tool_output("t", ToolOutput("q", fresh())), 3)
    res = slim_tool_output("t", ToolOutput("q", raw))
    kept = counter.count_text(res.content)
    yield figure(BENCH, "slim_1mb_json_ms", slim_ms, "ms", GOAL_SLIM, count_ms)
    yield figure(
        BENCH,
        "slim_context_tokens",
        kept,
        "tokens",
        f"<= {SlimPolicy().max_tokens} (baseline: the raw output's tokens)",
        res.original_tokens,
    )

    msgs = {s: _message(s, s % (n // 40) == 0) for s in range(n)}
    view = View(items, msgs)
    replace_ms = _best(lambda: replace_old_images(view, 8), repeat)
    yield figure(BENCH, "image_replacement_ms", replace_ms, "ms", "<= 20 ms", bare)
