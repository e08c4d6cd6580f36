"""One layer registry and one event constructor (issue 19 item 6)."""

from __future__ import annotations

import asyncio
import random

from bench.histories import generate
from core.context.compaction import (
    ALL_LEVELS,
    LAYERS,
    LEVELS,
    CompactionConfig,
    Compactor,
    MicroParams,
    SnipParams,
    level_help,
)
from core.inspector.compaction import LEVEL_HELP
from core.records import CompactionEvent, ContextItem


def test_every_level_has_one_entry_and_its_help_states_the_configured_numbers() -> None:
    assert tuple(LAYERS) == LEVELS
    assert set(LEVEL_HELP) == set(ALL_LEVELS)
    cfg = CompactionConfig(
        snip=SnipParams(max_messages=30, head_keep=2, tail_keep=28, step=5),
        micro=MicroParams(keep_recent=6, step=3),
        aggressive=MicroParams(keep_recent=1, step=1),
        threshold=0.6,
    )
    text = level_help(cfg)
    assert "over 30 messages, keep the first 2 and at most 28 recent" in text["snip"]
    assert "the 6 most recent results stay (the boundary moves 3 at a time)" in text["micro"]
    assert text["aggressive"].endswith("only the most recent result stays.")
    assert "0.6 × the window" in text["auto"]
    assert "over 50 messages" in LEVEL_HELP["snip"], "the UI's help shows the defaults"


def test_the_compactor_dispatches_every_level_through_the_registry() -> None:
    """Each manual level gives what its registry entry gives on the same context."""
    h = generate(random.Random(5).randint, 30)
    view, records = h.view(), h.records()
    cfg = CompactionConfig(window=1500, snip=SnipParams(max_messages=12, tail_keep=8, step=2))
    for name, layer in LAYERS.items():
        if layer.apply is None:
            continue
        out = asyncio.run(Compactor(cfg).compact(view, name, records))
        results = layer.apply(view, records, cfg, None)
        changed = [r for r in results if r.changed]
        assert [r.level for r in out.layers] == [r.level for r in changed], name
        if changed:
            assert out.items == changed[-1].items, name


def test_one_constructor_derives_counts_and_removed_from_the_contexts() -> None:
    before = (ContextItem(1), ContextItem(2), ContextItem(3), ContextItem(4))
    after = (ContextItem(1), ContextItem(None, "[Snipped 2 earlier messages]", "user"))
    ev = CompactionEvent.between("t", "snip", 4, before, after, (400, 90), trigger="manual")
    assert ev.removed == (2, 3, 4)
    assert (ev.messages_before, ev.messages_after) == (4, 2)
    assert (ev.tokens_before, ev.tokens_after, ev.trigger) == (400, 90, "manual")
    assert ev.context_after == after
    kept = CompactionEvent.between("t", "images", 4, before, before, (9, 5), removed=())
    assert kept.removed == () and kept.messages_after == 4
