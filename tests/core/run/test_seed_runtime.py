"""Issue 14: what seeds A/B/C say happens through the real run loop (a Runner against a
model server on 127.0.0.1), not only in the helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from core.llm import ChatClient, ModelServer, ScriptedModel
from core.records import LlmCall, Message
from core.run.config import RunConfig
from core.run.runner import Runner
from core.run.state import RunResult
from core.store import Store
from tests.core.run.helpers import script, tools


def _drive(
    store: Store, server: ModelServer, config: RunConfig, task: str = "look up the keys", **kw: Any
) -> tuple[Runner, RunResult]:
    async def go() -> tuple[Runner, RunResult]:
        async with ChatClient(server.settings()) as client:
            trace = store.create_trace("seed")
            r = Runner(store, trace.id, client, config, tools=tools(), **kw)
            await r.start_turn(task)
            return r, await r.run()

    return asyncio.run(go())


def _calls(store: Store, trace_id: str) -> list[LlmCall]:
    with store.read() as rd:
        return rd.llm_calls(trace_id)


def _messages(store: Store, trace_id: str) -> dict[int, Message]:
    with store.read() as rd:
        return {m.sequence: m for m in rd.all_messages(trace_id)}


def test_on_complete_compacts_the_finished_goal_and_its_reminders(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(4)))
    config = RunConfig(goal_mode="on_complete", injection_interval=2)
    r, _ = _drive(store, server, config)
    with store.read() as rd:
        events = rd.compactions(r.trace_id)
    goal_events = [e for e in events if e.level == "goal"]
    assert goal_events and goal_events[0].removed
    assert goal_events[0].tokens_after < goal_events[0].tokens_before
    msgs = _messages(store, r.trace_id)
    last = _calls(store, r.trace_id)[-1]
    sent = [msgs[i.sequence] for i in last.context if i.sequence is not None]
    assert not [m for m in sent if m.name == "lookup"]
    assert not [m for m in sent if m.role == "user" and m.kind == "injected_context"]
    assert any(m.kind == "injected_context" for m in msgs.values())  # there were some
