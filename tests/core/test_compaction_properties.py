"""Property tests of every level and layer (CMP-3, prefix stability, determinism).

Generated histories carry parallel tool calls, shuffled and duplicate results, goal calls,
injected skills and a pending call at the end; each example also cuts the history at a
drawn index (the context at that step) and draws small layer parameters so every branch of
every layer is reached. The oracle is ``validity_problems`` on the rendered OpenAI messages,
independent of the unit logic the layers use; nothing repairs a context afterwards.

Profiles (``CTXLENS_COMPACTION_PROFILE``): ``ci`` (default, 2,000 examples), ``dev`` (200),
``stress`` (20,000; used by ``bench/stress_compaction.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.histories import History, generate, safe_cut, safe_cut_after
from core.context.compaction import (
    LEVELS,
    CompactionConfig,
    Compactor,
    IdentityParams,
    MicroParams,
    Records,
    ScriptedSummarizer,
    SnipParams,
    SummaryParams,
    compact_goals,
    inject_identity,
    micro,
    snip,
    summarize,
    units,
    validity_problems,
)
from core.context.compaction.items import with_items
from core.context.compaction.scan import Scan
from core.context.compaction.summary_state import tree_from_calls
from core.context.compaction.units import cut_after
from core.context.view import View
from core.records import ContextItem

for name, n in (("ci", 2000), ("dev", 200), ("stress", 20000)):
    settings.register_profile(
        f"compaction-{name}",
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
PROFILE = settings.get_profile("compaction-" + os.environ.get("CTXLENS_COMPACTION_PROFILE", "ci"))
T = TypeVar("T")
DETERMINISTIC = ("goal", "snip", "micro", "aggressive", "identity")
ROOT = Path(__file__).resolve().parents[2]
LOOP = asyncio.new_event_loop()  # one loop for all examples: asyncio.run per call is slow


def run(coro: Coroutine[Any, Any, T]) -> T:
    return LOOP.run_until_complete(coro)


@pytest.fixture(scope="module", autouse=True)
def _close_loop() -> Iterator[None]:
    yield
    LOOP.close()


@st.composite
def histories(draw: st.DrawFn) -> History:
    steps = draw(st.integers(0, 14))
    system = draw(st.booleans())
    return generate(lambda lo, hi: draw(st.integers(lo, hi)), steps, system=system)


@st.composite
def configs(draw: st.DrawFn) -> CompactionConfig:
    stages = draw(
        st.sampled_from(
            [("compression",), ("reflection", "compression"), ("knowledge_eval", "compression")]
        )
    )
    return CompactionConfig(
        window=draw(st.integers(200, 6000)),
        snip=SnipParams(
            max_messages=draw(st.integers(3, 20)),
            head_keep=draw(st.integers(0, 4)),
            tail_keep=draw(st.integers(1, 12)),
            step=draw(st.integers(1, 5)),
        ),
        micro=MicroParams(keep_recent=draw(st.integers(0, 4)), step=draw(st.integers(1, 3))),
        aggressive=MicroParams(keep_recent=draw(st.integers(0, 2)), step=1),
        identity=IdentityParams(max_messages=draw(st.integers(2, 6))),
        summary=SummaryParams(stages=stages, max_narrative_tokens=draw(st.integers(20, 600))),
    )


def apply_level(view: View, records: Records, cfg: CompactionConfig, level: str) -> View:
    if level == "goal":
        res = compact_goals(view, records)
    elif level == "snip":
        res = snip(view, records, cfg.snip)
    elif level == "micro":
        res = micro(view, cfg.micro)
    elif level == "aggressive":
        res = micro(view, cfg.aggressive, "aggressive")
    elif level == "identity":
        res = inject_identity(view, cfg.identity)
    else:
        out = run(summarize(view, records, cfg.summary, ScriptedSummarizer()))
        return view if out.result is None else with_items(view, out.result.items)
    return with_items(view, res.items)


def problems(view: View) -> list[str]:
    return validity_problems(view.openai())


def dump(items: tuple[ContextItem, ...]) -> str:
    return json.dumps([i.to_json() for i in items], sort_keys=True)


def prefix(h: History, cut: int) -> tuple[View, Records]:
    msgs = h.messages()[: max(1, cut)]
    view = View(tuple(ContextItem(m.sequence) for m in msgs), {m.sequence: m for m in msgs})
    return view, Records.from_messages(msgs)


@PROFILE
@given(histories(), configs(), st.integers(0, 200), st.lists(st.sampled_from(LEVELS), max_size=4))
def test_every_layer_and_composition_stays_provider_valid(
    h: History, cfg: CompactionConfig, cut: int, chain: list[str]
) -> None:
    view, records = prefix(h, cut)
    assert problems(view) == [], "the generator makes valid contexts"
    for level in LEVELS:
        out = apply_level(view, records, cfg, level)
        assert problems(out) == [], (level, problems(out))
        assert dump(apply_level(view, records, cfg, level).items) == dump(out.items), level
        if level in DETERMINISTIC:
            again = apply_level(out, records, cfg, level)
            assert again.items == out.items, f"{level} is not idempotent"
    current = view
    for level in chain:
        current = apply_level(current, records, cfg, level)
        assert problems(current) == [], (chain, level)
    auto = run(Compactor(cfg, ScriptedSummarizer()).compact(view, "auto", records))
    assert problems(auto.after) == []


@PROFILE
@given(histories(), st.integers(0, 200), st.data())
def test_cuts_at_every_index_and_any_unit_subset_stay_valid(
    h: History, cut: int, data: st.DataObject
) -> None:
    view, _ = prefix(h, cut)
    items, msgs = view.items, view.messages
    us = units(items, msgs)
    marker = ContextItem(None, "[cut]", "user", "placeholder")
    pending_end = bool(us) and us[-1].pending
    for i in range(len(items) + 1):
        c = safe_cut(us, i)
        assert c <= i and c in {u.start for u in us} | {len(items)}
        assert problems(with_items(view, (marker, *items[c:]))) == []
        if not (pending_end and c == len(items)):  # nothing goes after a pending call
            assert problems(with_items(view, (*items[:c], marker, *items[c:]))) == []
            assert problems(with_items(view, (*items[:c], marker))) == []
    keep = data.draw(st.lists(st.booleans(), min_size=len(us), max_size=len(us)))
    kept = [it for u, k in zip(us, keep) if k or u.pending for it in items[u.start : u.end]]
    assert problems(with_items(view, kept)) == []


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_recorded_goal_events_and_replayed_calls_agree(h: History) -> None:
    assert tree_from_calls(h.messages()) == h.tree


SCRIPT = """
import asyncio, hashlib, json, random
from bench.histories import generate
from core.context.compaction import CompactionConfig, Compactor, ScriptedSummarizer, LEVELS
digest = hashlib.sha256()
for seed in range(8):
    h = generate(random.Random(seed).randint, 40)
    view, records = h.view(), h.records()
    for level in (*LEVELS, "auto"):
        cfg = CompactionConfig(window=2000)
        out = asyncio.run(Compactor(cfg, ScriptedSummarizer()).compact(view, level, records))
        digest.update(json.dumps([i.to_json() for i in out.items], sort_keys=True).encode())
print(digest.hexdigest())
"""


def test_outputs_are_byte_identical_across_processes() -> None:
    """Hash randomization must not leak into any output (sets, dict order)."""
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        digests.add(run.stdout.strip())
    assert len(digests) == 1


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(0, 200), st.data())
def test_local_unit_lookups_agree_with_units(h: History, cut: int, data: st.DataObject) -> None:
    """A scan that grows item by item re-splits only its last unit, and ``cut_after``
    looks around one index; both must agree with the forward split, also on contexts a
    layer has edited (items dropped, role overrides, synthetic items)."""
    view, _ = prefix(h, cut)
    items = list(view.items)
    edits = data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 200)), max_size=6))
    for op, at in edits:
        if not items:
            break
        k = at % len(items)
        if op == 0:
            del items[k]
        elif op == 1:
            items.insert(k, ContextItem(None, "[synthetic]", "user", "placeholder"))
        elif op == 2:
            items[k] = ContextItem(items[k].sequence, "x", "user", items[k].kind)
        else:
            items.append(items[k])
    scan = Scan(view.messages)
    for end in range(len(items) + 1):
        scan.extend(tuple(items[:end]))
    got = scan.units[-1] if scan.units else None
    us = units(items, view.messages)
    assert got == (us[-1] if us else None)
    assert scan.units == us
    for k in range(-1, len(items) + 2):
        assert cut_after(items, view.messages, k) == safe_cut_after(us, k), k
