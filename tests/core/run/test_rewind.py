"""Issue 17: Rewind then Step continues from the rewound point on a new branch, with the
state a runner attached there would have, and the panes agree on where the run stands."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.inspector.detail import message_detail
from core.llm import ChatClient, ModelServer, ScriptedModel
from core.records import Message
from core.run.runner import Runner
from core.run.state import Phase
from core.store import Store
from tests.core.run.helpers import runner, script


def _path(store: Store, trace_id: str) -> list[Message]:
    with store.read() as rd:
        return list(rd.iter_main_path(trace_id))


def test_rewind_to_a_tool_call_steps_into_that_tool_on_a_new_branch(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(3)))

    async def go() -> tuple[Runner, list[Message], list[tuple[Phase, Phase]]]:
        async with ChatClient(server.settings()) as client:
            r = runner(store, server, client)
            await r.start_turn("look up the keys")
            await r.run()
            before = _path(store, r.trace_id)
            call = next(m for m in before if any(c.name == "lookup" for c in m.tool_calls))
            r.rewind(call.sequence)
            assert r.phase is Phase.TOOLS and [c.id for c in r.pending] == [
                c.id for c in call.tool_calls
            ]
            assert r.final is None and r.call_message == call
            steps = []
            while r.phase is not Phase.DONE:
                step = await r.step()
                steps.append((step.ran, step.next))
            return r, before, steps

    r, before, steps = asyncio.run(go())
    assert steps[0] == (Phase.TOOLS, Phase.BOOKKEEPING), "the pending call runs first"
    after = _path(store, r.trace_id)
    fork = next(m for m in before if any(c.name == "lookup" for c in m.tool_calls))
    cut = [m.sequence for m in after].index(fork.sequence) + 1
    assert [m.sequence for m in after[:cut]] == [m.sequence for m in before[:cut]]
    assert after[cut].parent_sequence == fork.sequence and after[cut].sequence > before[-1].sequence
    assert after[cut].role == "tool" and after[cut].tool_call_id == fork.tool_calls[0].id
    for m in after:  # every request was well formed: each call answered before the next
        if m.tool_calls:
            results = {x.tool_call_id for x in after if x.role == "tool"}
            assert {c.id for c in m.tool_calls} <= results
    assert r.final == "Done: all keys looked up."


def test_rewind_forgets_the_abandoned_turn_state(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """A turn that hit ``max_steps`` answered without tools; rewound to its start, the next
    call is a normal one again (tools offered), counted from the rewind point."""
    server = serve(ScriptedModel(script(3)))

    def offered(trace_id: str) -> list[bool]:
        with store.read() as rd:
            return [bool((c.params or {}).get("tools")) for c in rd.llm_calls(trace_id)]

    async def go() -> None:
        async with ChatClient(server.settings()) as client:
            r = runner(store, server, client, max_steps=3)
            user = await r.start_turn("look up the keys")
            await r.run()
            assert r.turn_steps == 3 and offered(r.trace_id) == [True, True, False]
            r.rewind(user.sequence)
            assert (r.phase, r.turn_steps, r.final) == (Phase.PREPARE, 0, None)
            await r.run(pause_at={Phase.TOOLS})
            assert offered(r.trace_id)[3:] == [True], "tools offered again after the rewind"
            assert r.turn_steps == 1

    asyncio.run(go())


def test_a_message_a_rewind_abandoned_is_not_shown_as_main(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(2)))

    async def go() -> tuple[Runner, list[Message]]:
        async with ChatClient(server.settings()) as client:
            r = runner(store, server, client)
            user = await r.start_turn("look up the keys")
            await r.run()
            before = _path(store, r.trace_id)
            r.rewind(user.sequence)
            await r.run()
            return r, before

    r, before = asyncio.run(go())
    with store.read() as rd:
        old = dict(message_detail(rd, r.trace_id, before[-1].sequence).facts)
        new = dict(message_detail(rd, r.trace_id, rd.trace(r.trace_id).head or 0).facts)
    assert old["branch"].startswith("abandoned") and new["branch"] == "main"
