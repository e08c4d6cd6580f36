"""Incremental layer state (issue 20): a context that grows costs its new items, and the
results are those of a pass from scratch.

A ``ContextState`` fed a growing context (plain appends, or appends after a compaction
edited it) must give, at every size, exactly what each layer gives with no state (the run
loop's side: tests/core/run/test_compaction_state.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.histories import History, generate
from core.context.compaction import (
    CompactionConfig,
    MicroParams,
    Records,
    ScriptedSummarizer,
    SnipParams,
    compact_goals,
    micro,
    snip,
    summarize,
)
from core.context.compaction.scan import ContextState
from core.context.view import View
from core.records import ContextItem

LOOP = asyncio.new_event_loop()


@pytest.fixture(scope="module", autouse=True)
def _close_loop() -> Iterator[None]:
    yield
    LOOP.close()


def _layers(records: Records, cfg: CompactionConfig) -> dict[str, Any]:
    summarizer = ScriptedSummarizer()
    return {
        "goal": lambda v, s: compact_goals(v, records, state=s),
        "goal_one": lambda v, s: compact_goals(v, records, records.goals.finished_ids()[:1], s),
        "snip": lambda v, s: snip(v, records, cfg.snip, s),
        "micro": lambda v, s: micro(v, cfg.micro, state=s),
        "aggressive": lambda v, s: micro(v, cfg.aggressive, "aggressive", s),
        "summary": lambda v, s: LOOP.run_until_complete(
            summarize(v, records, cfg.summary, summarizer, s)
        ),
        "tokens": lambda v, s: (s or ContextState()).scan(v).tokens,
    }


def _comparable(out: Any) -> Any:
    """A layer's result without the summarizer's request objects (compared by value)."""
    if hasattr(out, "stages"):
        res = out.result
        return (res, out.error, out.content, [(s.stage, s.output) for s in out.stages])
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 14),
    st.data(),
    st.integers(3, 12),
    st.integers(0, 4),
    st.integers(1, 4),
    st.sampled_from(["none", "goal", "snip", "micro"]),
    st.booleans(),
)
def test_a_grown_context_gets_the_results_of_a_pass_from_scratch(
    steps: int,
    data: st.DataObject,
    max_messages: int,
    keep: int,
    step: int,
    edited_by: str,
    token: bool,
) -> None:
    h: History = generate(lambda lo, hi: data.draw(st.integers(lo, hi)), steps)
    msgs = h.messages()
    by_seq = {m.sequence: m for m in msgs}
    records = Records.from_messages(msgs, h.tree)
    cfg = CompactionConfig(
        snip=SnipParams(max_messages=max_messages, head_keep=2, tail_keep=4, step=step),
        micro=MicroParams(keep_recent=keep, step=step),
    )
    layers = _layers(records, cfg)
    split = data.draw(st.integers(0, len(msgs)))
    start: tuple[ContextItem, ...] = tuple(ContextItem(m.sequence) for m in msgs[:split])
    if edited_by != "none":  # the context a compaction left, then appends after it
        start = layers[edited_by](View(start, by_seq), None).items
    grows = object() if token else None
    state = ContextState()
    for end in range(split, len(msgs) + 1):
        items = (*start, *(ContextItem(m.sequence) for m in msgs[split:end]))
        view = View(items, by_seq, grows=grows)
        for name, layer in layers.items():
            assert _comparable(layer(view, state)) == _comparable(layer(view, None)), (name, end)


def test_a_state_starts_over_on_a_context_that_does_not_extend_it() -> None:
    h = generate(__import__("random").Random(3).randint, 12)
    view, records = h.view(), h.records()
    state = ContextState()
    micro(view, MicroParams(keep_recent=1, step=1), state=state)
    shorter = View(view.items[:-3], view.messages)
    assert micro(shorter, MicroParams(keep_recent=1, step=1), state=state) == micro(
        shorter, MicroParams(keep_recent=1, step=1)
    )
    assert compact_goals(shorter, records, state=state) == compact_goals(shorter, records)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 14), st.data(), st.integers(0, 4), st.integers(1, 4), st.booleans())
def test_the_chain_over_micro_output_through_the_state_gets_the_results_of_a_pass_from_scratch(
    steps: int, data: st.DataObject, keep: int, step: int, token: bool
) -> None:
    """The compactor's path: micro hands the state the scan of its output, which the
    token count and the next layers then read, and which a run that committed micro's
    output continues with its appends (until micro, on the old context, moves on). At
    every size everything equals the same calls with no state."""
    h: History = generate(lambda lo, hi: data.draw(st.integers(lo, hi)), steps)
    msgs = h.messages()
    by_seq = {m.sequence: m for m in msgs}
    records = Records.from_messages(msgs, h.tree)
    cfg = CompactionConfig(
        snip=SnipParams(max_messages=8, head_keep=2, tail_keep=4, step=step),
        micro=MicroParams(keep_recent=keep, step=step),
    )
    layers = _layers(records, cfg)
    commit_at = data.draw(st.integers(0, len(msgs)))
    grows = object() if token else None
    state = ContextState()
    committed: tuple[ContextItem, ...] | None = None
    for end in range(len(msgs) + 1):
        view = View(tuple(ContextItem(m.sequence) for m in msgs[:end]), by_seq, grows=grows)
        first = layers["micro"](view, state)
        assert first == layers["micro"](view, None), end
        chained = View(first.items, by_seq)
        for name, layer in layers.items():
            got = _comparable(layer(chained, state))
            assert got == _comparable(layer(chained, None)), (name, end)
        if end == commit_at:
            committed = first.items
        if committed is not None:  # the run goes on from the committed output
            after = (ContextItem(m.sequence) for m in msgs[commit_at:end])
            ran = View((*committed, *after), by_seq)
            for name, layer in layers.items():
                assert _comparable(layer(ran, state)) == _comparable(layer(ran, None)), (name, end)
