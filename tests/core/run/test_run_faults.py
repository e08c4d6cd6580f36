"""LLM-3/4 through the run loop: every fault ends as the ladder promises, and the store
holds no lost, duplicated or partial message (a real server on 127.0.0.1, a fake clock)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from core.llm import ChatClient, Fault, ModelServer, Script, ScriptedModel, Step
from core.run.config import RunConfig
from core.run.runner import Runner
from core.run.state import Phase
from core.run.tools import Tool, ToolContext, ToolRegistry, ToolResult
from core.store import Store
from tests.core.run.helpers import script, tools
from tests.fake_clock import FakeClock


def _run(
    store: Store,
    server: ModelServer,
    config: RunConfig,
    reg: ToolRegistry | None = None,
    stream: bool = True,
) -> tuple[Runner, FakeClock]:
    clock = FakeClock()

    async def go() -> Runner:
        async with ChatClient(server.settings(stream=stream)) as client:
            trace = store.create_trace("faults")
            r = Runner(store, trace.id, client, config, tools=reg or tools(), clock=clock)
            await r.start_turn("look up the keys")
            await r.run()
            return r

    return asyncio.run(go()), clock


def _assistants(store: Store, trace_id: str) -> list[Any]:
    with store.read() as rd:
        return [m for m in rd.all_messages(trace_id) if m.role == "assistant"]


def _calls(store: Store, trace_id: str) -> list[Any]:
    with store.read() as rd:
        return rd.llm_calls(trace_id)


@pytest.mark.parametrize("stream", [True, False])
def test_rate_limits_retry_with_retry_after_and_store_once(
    store: Store, serve: Callable[..., ModelServer], stream: bool
) -> None:
    server = serve(ScriptedModel(script(2)))
    server.faults.add(Fault.rate_limited(retry_after=3), times=2)
    r, clock = _run(store, server, RunConfig(), stream=stream)
    assert r.phase is Phase.DONE and r.final
    assert clock.sleeps[:2] == [3.0, 3.0]
    calls = _calls(store, r.trace_id)
    failed = [c for c in calls if c.error]
    assert len(failed) == 2 and all(json.loads(c.error)["kind"] == "rate_limited" for c in failed)
    assert all(c.response_sequence is None for c in failed)
    ok = [c for c in calls if not c.error]
    assistants = _assistants(store, r.trace_id)
    assert len(ok) == len(assistants), "one stored message per answered call, none lost"
    assert sorted(c.response_sequence for c in ok) == [m.sequence for m in assistants]


def test_overloaded_three_times_switches_to_the_fallback(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(1)))
    server.faults.add(Fault.overloaded(), times=3)
    r, clock = _run(store, server, RunConfig(model="main-model", fallback_model="backup"))
    assert r.phase is Phase.DONE and r.final
    models = [q.model for q in server.requests]
    assert models[:4] == ["main-model"] * 3 + ["backup"]
    assert len(clock.sleeps) == 2, "no wait before the switch to the fallback"


@pytest.mark.parametrize(
    "fault",
    [Fault.server_error(), Fault.cut_stream(after_chunks=2), Fault.malformed_sse()],
    ids=["500", "cut-stream", "malformed-sse"],
)
def test_surfaced_errors_end_the_turn_without_partial_messages(
    store: Store, serve: Callable[..., ModelServer], fault: Fault
) -> None:
    server = serve(ScriptedModel(script(2)))
    server.faults.add(fault, times=1)
    r, _ = _run(store, server, RunConfig())
    assert r.phase is Phase.DONE and r.final is None
    assert len(server.requests) == 1, "a non-retryable error is sent once"
    calls = _calls(store, r.trace_id)
    assert len(calls) == 1 and calls[0].error and calls[0].response_sequence is None
    assert _assistants(store, r.trace_id) == []


def _big(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return ToolResult(f"rows for {args['key']}: " + " ".join(f"r{i}" for i in range(300)))


def test_prompt_too_long_climbs_the_ladder_and_is_never_resent_unchanged(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    steps = [Step.tool(f"B{i}", "big", key=f"k{i}") for i in range(6)]
    steps.append(Step.final("F", "done"))
    server = serve(ScriptedModel(Script(tuple(steps))), context_window=2600)
    params = {"type": "object", "properties": {"key": {"type": "string"}}}
    reg = ToolRegistry().extend([Tool("big", "Big rows.", params, _big)])
    r, _ = _run(store, server, RunConfig(window=1_000_000), reg)
    assert r.phase is Phase.DONE and r.final == "done"
    rejected = [q for q in server.requests if q.status == 400]
    assert rejected, "the server's window was exceeded at least once"
    for q in rejected:
        later = server.requests[q.index + 1 :]
        assert all(x.messages != q.messages for x in later), "a 400 request was resent as is"
    with store.read() as rd:
        levels = [c.level for c in rd.compactions(r.trace_id)]
    assert levels and levels[0] == "aggressive", levels


class _FailingSummarizer:
    """Every summary fails, as with a summary model that is down."""

    def __init__(self) -> None:
        self.calls = 0

    async def summarize(self, request: Any) -> str:
        self.calls += 1
        raise RuntimeError("summary model unreachable")


def test_the_breaker_opening_is_a_run_event_and_a_stored_one(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """Issue 18: after three failed summaries the breaker opened silently; now its state
    changes are run events (the window's activity line shows them) and stored rows."""
    from core.run.live import event_text

    long = "We examined the data and moved on to the next question. " * 30
    steps = [Step.tool(f"L{i}", "lookup", text=f"Turn {i}. {long}", key=f"k{i}") for i in range(12)]
    server = serve(ScriptedModel(Script((*steps, Step.final("F", "done")))))
    seen: list[str] = []

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            trace = store.create_trace("breaker")
            summarizer = _FailingSummarizer()
            r = Runner(
                store, trace.id, client, RunConfig(window=2000), tools=tools(),
                summarizer=summarizer,
            )  # fmt: skip
            r.events.subscribe(lambda e: seen.append(event_text(e) or ""))
            await r.start_turn("look up the keys")
            await r.run()
            assert summarizer.calls >= 3
            return r

    r = asyncio.run(go())
    with store.read() as rd:
        rows = [e for e in rd.table_rows("run_events", r.trace_id) if e["type"] == "breaker"]
    assert rows and rows[0]["payload"]["breaker"] == "open", rows
    assert rows[0]["payload"]["failures"] == 3 and rows[0]["payload"]["was"] == "closed"
    assert any(s.startswith("compaction breaker open after 3 failures") for s in seen), seen
