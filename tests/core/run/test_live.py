"""Live runners over stored traces (core/run/live.py): what can run, against what, and the
resume phase read from the store alone."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from core.demo.scenario import CONSTRAINT, TASK, DemoOptions, create_demo_trace
from core.llm import ChatClient, ModelServer, Script, ScriptedModel, Step
from core.run.config import RunConfig
from core.run.events import EventBus, RunEvent
from core.run.live import (
    NotRunnableError,
    event_text,
    fatal_error,
    live_support,
    next_step_text,
    open_live_run,
    stored_step,
)
from core.run.rerunners import DEMO_TOOLS
from core.run.resume import resume_point_of
from core.run.runner import Runner
from core.run.state import Phase
from core.store import Store
from tests.sample_trace import write_sample


def _server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ctxlens-model-server"]


def test_which_traces_can_run(store: Store) -> None:
    demo = store.trace(create_demo_trace(store, DemoOptions(steps=10)))
    assert live_support(demo, env={}).kind == "demo" and live_support(demo, env={}).runnable

    sample = write_sample(store)
    foreign = live_support(sample, env={})
    assert foreign.kind == "foreign" and not foreign.runnable
    assert "sample traces cannot be run" in foreign.detail

    config = RunConfig(model="gpt-x").to_json()
    recorded = store.create_trace("ran", metadata={"run_config": config})
    missing = live_support(recorded, env={})
    assert missing.kind == "unconfigured" and "CTXLENS_BASE_URL" in missing.detail
    assert "'gpt-x'" in missing.detail, "says which model would be used"

    own = live_support(recorded, env={"CTXLENS_BASE_URL": "http://h/v1"})
    assert own.kind == "endpoint" and own.model is not None and own.model.model == "gpt-x"
    chosen = live_support(recorded, env={"CTXLENS_BASE_URL": "http://h/v1", "CTXLENS_MODEL": "m2"})
    assert chosen.model is not None and chosen.model.model == "m2"
    assert chosen.detail == "model m2 at http://h/v1"


def test_a_foreign_trace_refuses_to_open(store: Store) -> None:
    sample = write_sample(store)

    async def go() -> None:
        async with open_live_run(store, sample.id, env={}):
            raise AssertionError("must not open")

    with pytest.raises(NotRunnableError, match="cannot be run"):
        asyncio.run(go())


def test_stepping_a_demo_tracks_the_resume_phase_and_adds_the_constraint(tmp_path: Path) -> None:
    """Step a whole (short) demo one phase at a time: the phase read from the store alone
    agrees with the runner wherever it can (pending tools, done), the constraint arrives
    once after goal 3.3, and the model server is gone when the context closes."""
    with Store.open(tmp_path / "d.db") as store:
        tid = create_demo_trace(store, DemoOptions(steps=80))

        bus = EventBus()
        events: list[RunEvent] = []
        bus.subscribe(events.append)

        async def go() -> list[tuple[Phase, Phase]]:
            seen = []
            async with open_live_run(store, tid, bus) as runner:
                assert _server_threads(), "the scripted model is served while open"
                assert runner.attach() is Phase.IDLE
                await runner.start_turn(TASK)
                while runner.phase is not Phase.DONE:
                    await runner.step()
                    with store.read() as r:
                        seen.append((runner.phase, resume_point_of(r, tid).phase))
                        if runner.phase is Phase.TOOLS:  # the store tells the same next step
                            assert stored_step(r, tid) == (Phase.TOOLS, next_step_text(runner))
            return seen

        seen = asyncio.run(go())
        assert not _server_threads()
        assert seen[-1] == (Phase.DONE, Phase.DONE)
        for live, stored in seen:
            assert (live is Phase.TOOLS) == (stored is Phase.TOOLS)
            if live is Phase.DONE:
                assert stored is Phase.DONE
            if stored is Phase.DONE:  # a final answer: only its bookkeeping may be left
                assert live in (Phase.BOOKKEEPING, Phase.DONE)
        with store.read() as r:
            path = list(r.iter_main_path(tid))
            goal_done = next(
                e.sequence for e in r.goal_events(tid) if e.op == "done" and e.goal_id == "3.3"
            )
        constraints = [m for m in path if m.kind == "message" and CONSTRAINT in m.content]
        assert len(constraints) == 1 and constraints[0].sequence > goal_done
        texts = {e.type: event_text(e) for e in events}
        assert {"tool_call", "tool_result", "compaction", "injection", "done"} <= set(texts)
        calls = [e for e in events if e.type == "tool_call"]
        assert all(str(e.data["name"]) in str(event_text(e)) for e in calls)
        assert texts["done"] == "the turn is finished"
        assert not [e for e in events if fatal_error(e)], "the demo ends without errors"


def test_next_step_text_names_the_pending_tool(tmp_path: Path) -> None:
    with Store.open(tmp_path / "d.db") as store:
        tid = create_demo_trace(store, DemoOptions(steps=10))

        async def go() -> list[str]:
            texts = []
            async with open_live_run(store, tid) as runner:
                await runner.start_turn(TASK)
                for _ in range(4):
                    texts.append(next_step_text(runner))
                    await runner.step()
                    if runner.phase is Phase.TOOLS:
                        call = runner.pending[0]
                        texts.append(next_step_text(runner))
                        assert call.name in texts[-1]
            return texts

        texts = asyncio.run(go())
        assert texts[0] == "before preparing the next context"
        assert texts[1] == "before model call 1"
        assert texts[2].startswith("before tool ") and texts[2].endswith("(1 of 1)")


def _goal_script() -> Script:
    return Script(
        (
            Step.goal("G", add=["Answer"], focus="1"),
            Step.goal_done("GD", "1", "Answered."),
            Step.final("F", "All done."),
        )
    )


def test_a_recorded_run_continues_against_the_configured_endpoint(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(_goal_script()))
    trace = store.create_trace("ran")

    async def first() -> None:
        async with ChatClient(server.settings()) as client:
            runner = Runner(store, trace.id, client, RunConfig(model="scripted"))
            await runner.start_turn("answer")
            await runner.run(pause_at={Phase.TOOLS})  # stop before the first tool

    asyncio.run(first())
    env = {"CTXLENS_BASE_URL": server.url}

    async def resume() -> tuple[Phase, str | None, str]:
        async with open_live_run(store, trace.id, env=env) as runner:
            attached = runner.attach()
            result = await runner.run()
            return attached, result.final, runner.config.model

    attached, final, model = asyncio.run(resume())
    assert attached is Phase.TOOLS and final == "All done." and model == "scripted"
    with store.read() as r:
        assert len(r.llm_calls(trace.id)) == 3


def test_a_run_offered_the_demo_tools_gets_them_back(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    server = serve()
    config = RunConfig(model="m", extra={"tools": DEMO_TOOLS}).to_json()
    trace = store.create_trace("ran", metadata={"run_config": config})

    async def go() -> set[str]:
        async with open_live_run(store, trace.id, env={"CTXLENS_BASE_URL": server.url}) as r:
            return set(r.tools.tools)

    names = asyncio.run(go())
    assert "query_day" in names
    with socket.socket() as probe:
        probe.connect(("127.0.0.1", server.port))  # the server is the fixture's: still up
