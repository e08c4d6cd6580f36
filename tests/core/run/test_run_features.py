"""RUN-5 project memory, RUN-6 trajectory export, background notices, subagent isolation."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from core.llm import ChatClient, ModelServer, Script, ScriptedModel, Step
from core.run.config import RunConfig
from core.run.runner import Runner
from core.store import Store
from tests.core.run.helpers import tools


def _script() -> Script:
    return Script(
        (
            Step.tool(
                "M1",
                "save_memory",
                type="project",
                content="Evidence windows of the risk analysis are named win-NNNN",
            ),
            Step.tool("L1", "lookup", key="a"),
            Step.tool("L2", "lookup", key="b"),
            Step.final("F", "finished"),
        )
    )


def test_memory_trajectory_and_background_notice(
    store: Store, serve: Callable[..., ModelServer], tmp_path: Path
) -> None:
    server = serve(ScriptedModel(_script()))
    config = RunConfig(
        memory_dir=str(tmp_path / "memory"), trajectory_dir=str(tmp_path / "trajectories")
    )

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            trace = store.create_trace("features")
            r = Runner(store, trace.id, client, config, tools=tools())
            await r.start_turn("remember and look up")

            async def slow_job() -> str:
                return "download finished: 3 files"

            await r.run(max_steps=2)  # prepare + the save_memory call
            task = r.run_background("download", slow_job)
            await task
            await r.run()
            return r

    r = asyncio.run(go())
    with store.read() as rd:
        path = list(rd.iter_main_path(r.trace_id))
    notices = [m for m in path if m.kind == "notice"]
    assert len(notices) == 1 and "download finished" in notices[0].content
    saved = [m for m in path if m.name == "save_memory"]
    assert saved and saved[0].content.startswith("Saved")
    # the next session's system prompt carries the memory
    second = Runner(store, store.create_trace("next").id, None, config)  # type: ignore[arg-type]
    prompt = second._system_prompt().text
    assert "win-NNNN" in prompt
    exported = json.loads((tmp_path / "trajectories" / f"{r.trace_id}.json").read_text())
    assert exported["trace"]["id"] == r.trace_id
    assert len(exported["messages"]) == len(path)


def test_a_background_subagent_answers_in_a_notice_before_a_later_call(
    store: Store, serve: Callable[..., ModelServer]
) -> None:
    """The demo's ``verify_evidence(background=true)``: the tool returns at once, the
    verifier runs on its own branch, and its answer reaches the main agent as a notice."""
    from core.demo.tools import VERIFIER_PROMPT, demo_tools
    from core.demo.world import World
    from core.run.state import Phase

    world = World()
    top = world.top_entities[0][0]
    main = Script(
        (
            Step.tool("V", "verify_evidence", entities=[top], background=True),
            Step.final("F", "verified in the background"),
        )
    )
    sub = Script((Step.final("VF", "windows support the finding"),), name="v", match="verifier")
    server = serve(ScriptedModel(main, sub))

    async def go() -> Runner:
        async with ChatClient(server.settings()) as client:
            r = Runner(store, store.create_trace("bg").id, client, tools=demo_tools(world))
            await r.start_turn("verify")
            await r.run(pause_at={Phase.BOOKKEEPING})  # the tool returned at once
            await asyncio.gather(*r.background)
            await r.run()
            return r

    r = asyncio.run(go())
    with store.read() as rd:
        path = list(rd.iter_main_path(r.trace_id))
        branch = [m for m in rd.all_messages(r.trace_id) if m.branch_type == "subagent"]
    result = next(m for m in path if m.name == "verify_evidence")
    assert "started in the background" in result.content
    notices = [m for m in path if m.kind == "notice"]
    assert len(notices) == 1 and "windows support the finding" in notices[0].content
    assert notices[0].sequence > result.sequence
    assert {m.agent_name for m in branch} == {"verifier-1"}
    assert branch[0].role == "system" and VERIFIER_PROMPT in branch[0].content
    assert branch[-1].content == "windows support the finding"
    assert r.final == "verified in the background"
