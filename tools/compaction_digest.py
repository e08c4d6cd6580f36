"""Digests of every compaction layer's output, to compare two versions of the code.

    PYTHONPATH=<tree> python tools/compaction_digest.py > digests.txt

One line per history, layer and path: the cold pass (``clear_memos()``, a fresh
``ContextState``, as ``layer_ms_cold`` times it) and the warm one (``Compactor.compact``
once per appended unit, as ``compactor_ms`` times it, plus ``auto``), each a hash of the
items, removed and replaced sequences, details, summary requests and contents. Histories:
the bench's 10k and 1k ones and six more generated ones (three seeds, realistic or not).
Run it over the old tree and the new one and ``diff`` the outputs: a restructured fold
must give the same bytes (issue 20; docs/bench.md, "Cold compaction pass, third look").
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from typing import Any

from bench.bench_compaction import _big_history, _layers, _Model, clear_memos
from bench.histories import generate, safe_cut
from core.context.compaction import CompactionConfig, Compactor, Records, units
from core.context.compaction.items import with_items
from core.context.compaction.scan import ContextState
from core.context.view import View


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def _shape(result: Any) -> object:
    """A layer's or summary's result as plain values (``repr`` of items, not identities)."""
    if result is None or isinstance(result, int):
        return result
    if hasattr(result, "stages"):  # a SummaryResult
        stages = [(s.stage, tuple(map(repr, s.request.messages)), s.output) for s in result.stages]
        return ("summary", _shape(result.result), result.error, result.content, stages)
    items = tuple(map(repr, result.items))
    return (result.level, items, tuple(result.removed), tuple(result.replaced), result.details)


def _generated(n: int, seed: int, realistic: bool) -> tuple[View, Records]:
    rng = random.Random(seed)
    view = generate(rng.randint, steps=n // 2, pending_end=False, realistic=realistic).view()
    end = safe_cut(units(view.items, view.messages), n)
    msgs = [view.messages[i.sequence] for i in view.items[:end] if i.sequence is not None]
    return with_items(view, view.items[:end]), Records.from_messages(msgs)


def main() -> None:
    loop = asyncio.new_event_loop()
    cases = [("bench10k", *_big_history(10_000)), ("bench1k", *_big_history(1000))]
    for seed in (1, 2, 3):
        cases += [(f"s{seed}r", *_generated(3000, seed, True))]
        cases += [(f"s{seed}p", *_generated(2000, seed, False))]
    for name, view, records in cases:
        for level, layer in _layers(records, loop).items():
            clear_memos()
            print(name, "cold", level, _digest(_shape(layer(view, ContextState()))))
        ends = [u.end for u in units(view.items, view.messages)[-25:]]
        token = object()
        grown = [View(view.items[:end], view.messages, grows=token) for end in ends]
        for level in ("goal", "snip", "micro", "aggressive", "summary", "auto"):
            compactor = Compactor(CompactionConfig(window=20_000), _Model())
            seen = []
            for v in grown:
                o = loop.run_until_complete(compactor.compact(v, level, records, dry_run=True))
                layers = [_shape(r) for r in o.layers]
                seen.append((o.status, o.reason, tuple(map(repr, o.items)), o.tokens_after))
                seen.append((o.tokens_before, layers, _shape(o.summary)))
            print(name, "warm", level, _digest(seen))
    loop.close()


if __name__ == "__main__":
    main()
