"""The run loop keeps the compactor's layer state across steps (issue 20): a run whose
compaction is attempted at every step resolves each message about once, not the whole
history again per step."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.llm import ChatClient, ModelServer, Script, ScriptedModel, Step
from core.run.config import RunConfig
from core.run.runner import Runner
from core.run.state import Phase
from core.store import Store
from tests.core.run.helpers import tools


def _steps(n: int) -> Script:
    out = [Step.tool(f"L{i}", "lookup", key=f"k{i}") for i in range(n)]
    return Script((*out, Step.final("F", "Done: all keys looked up.")))


def test_a_run_that_compacts_at_every_step_resolves_each_message_about_once(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """The window is tiny, so every step is over the limit and the compactor runs its
    layers; none can change the context (keep-recent and snip limits are huge, no
    summarizer), so nothing is committed and the context only grows. The state must then
    fold each new message once, not the whole history per step."""
    n = 30
    config = RunConfig(
        window=200,
        snip_max_messages=10_000,
        micro_keep_recent=10_000,
        aggressive_keep_recent=10_000,
        breaker_failures=10_000,
    )
    server = serve(ScriptedModel(_steps(n)))

    async def go() -> tuple[int, int, int]:
        async with ChatClient(server.settings()) as client:
            trace = store.create_trace("incremental")
            r = Runner(store, trace.id, client, config, tools=tools())
            await r.start_turn("Look up the keys.")
            while r.phase is not Phase.DONE:
                await r.step()
            return r.compactor.state.work, len(r.view().items), r.compactor.breaker.failures

    work, size, attempts = asyncio.run(go())
    assert attempts >= n, "the compactor ran at (nearly) every step"
    assert size > 2 * n
    # from scratch the attempts would resolve about attempts × size / 2 items
    assert work <= 2 * size, (work, size, attempts)


def test_micro_through_the_compactor_resolves_its_output_about_once() -> None:
    """``Compactor.compact(view, "micro")`` at every step of a growing context: micro
    keeps the scan of its output up to date from the first result it newly replaced, so
    the compactor's count of the output does not resolve the whole output again each time
    the boundary moves (it did: one full pass over the output per move)."""
    import random

    from bench.histories import generate
    from core.context.compaction import CompactionConfig, Compactor, MicroParams, units
    from core.context.view import View

    h = generate(random.Random(5).randint, steps=300, pending_end=False)
    full = h.view()
    ends = [u.end for u in units(full.items, full.messages)][-60:]
    compactor = Compactor(CompactionConfig(micro=MicroParams(keep_recent=8, step=8)))
    token = object()
    moves = 0
    loop = asyncio.new_event_loop()
    try:
        last: tuple[int, ...] = ()
        for end in ends:
            view = View(full.items[:end], full.messages, grows=token)
            out = loop.run_until_complete(compactor.compact(view, "micro", dry_run=True))
            assert out.compacted
            replaced = out.layers[0].replaced
            moves += replaced != last
            last = replaced
    finally:
        loop.close()
    size = len(full.items[: ends[-1]])
    assert moves >= 5, "the boundary moved several times"
    # the input once, the output once, plus each move's few re-resolved items and the
    # appends (before: the whole output again per move, 5,487 items here)
    assert compactor.state.work <= 2 * size + 400, (compactor.state.work, size, moves)
