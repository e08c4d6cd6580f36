"""Subagents (RUN-4) and background work of a run."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace

from sqlalchemy import func, select

from core.context.nudges import BackgroundNotice
from core.run.base import RunnerCore
from core.run.tools import ToolRegistry
from core.store import schema as t


async def spawn_subagent(
    rt: RunnerCore,
    task: str,
    *,
    name: str = "sub",
    system_prompt: str,
    tools: ToolRegistry | None = None,
    max_steps: int | None = None,
    skills: tuple[str, ...] | None = None,
) -> str:
    """Run a subagent (RUN-4) on its own branch: fresh context, restricted tools, own
    compaction and duplicate detection, at most ``max_steps`` model calls then a forced
    final answer; only its final text returns to the parent. ``skills``: what its system
    prompt lists (``None``: all)."""
    assert rt.turn.call_message is not None, "subagents start from a tool call"
    rt.subagent_count += 1
    agent = f"{name}-{rt.subagent_count}"
    config = replace(
        rt.config,
        system_prompt=system_prompt,
        max_steps=max_steps or rt.config.subagent_max_steps,
        inject_skills=(),
        prompt_skills=skills,  # the call site narrows what its prompt lists
    )
    from core.run.runner import Runner  # the full machine (runner imports this module)

    recorded = recorded_subagent(rt, agent)
    child = Runner(
        rt.store,
        rt.trace_id,
        rt.model,
        config,
        tools=tools if tools is not None else rt.tools.restricted(),
        skills=rt.skills,
        hooks=rt.hooks,
        events=rt.events,
        slimmers=rt.slimmers,
        clock=rt.clock,
        wall_clock=rt.wall_clock,
        agent_name=agent,
        branch_type="subagent",
        branch_id=recorded[0] if recorded else f"{agent}-{uuid.uuid4().hex[:8]}",
        fork_at=rt.turn.call_message.sequence,
        cancel=rt.cancel_event,
    )
    await rt.hooks.fire("subagent_start", {"agent": agent, "task": task})
    rt.emit("subagent", {"agent": agent, "task": task, "status": "start"})
    if recorded:  # resumed after a kill inside it: continue its own branch, redo nothing
        child.lane.moved(recorded[1])
        child.attach()
    else:
        await child.start_turn(task)
    result = await child.run()
    final = child.final or f"(subagent {agent} stopped: {result.stopped})"
    await rt.hooks.fire("subagent_stop", {"agent": agent, "summary": final})
    rt.emit("subagent", {"agent": agent, "status": "done", "calls": result.llm_calls})
    return (
        f"[subagent {agent}: {result.llm_calls} model calls, {result.tool_calls} tools]\n" + final
    )


def recorded_subagent(rt: RunnerCore, agent: str) -> tuple[str, int] | None:
    """``(branch id, last message)`` of a subagent ``agent`` already forked at this
    call (a run killed inside it and resumed), or ``None``."""
    assert rt.turn.call_message is not None
    m = t.messages.c
    with rt.store.read() as r:
        root = r.conn.execute(
            select(m.branch_id).where(
                m.trace_id == rt.trace_id,
                m.parent_sequence == rt.turn.call_message.sequence,
                m.branch_type == "subagent",
                m.agent_name == agent,
            )
        ).first()
        if root is None:
            return None
        last = r.conn.execute(
            select(func.max(m.sequence)).where(m.trace_id == rt.trace_id, m.branch_id == root[0])
        ).scalar_one()
    return str(root[0]), int(last)


def run_background(
    rt: RunnerCore, name: str, work: Callable[[], Awaitable[str]]
) -> asyncio.Task[None]:
    """Start background work; its completion notice is injected before a later call."""
    task_id = f"bg-{uuid.uuid4().hex[:8]}"

    async def wrapper() -> None:
        try:
            text = await work()
            rt.push_notice(BackgroundNotice(task_id, name, True, text))
        except Exception as exc:
            rt.push_notice(BackgroundNotice(task_id, name, False, str(exc)))

    task = asyncio.get_running_loop().create_task(wrapper())
    rt.background.add(task)
    task.add_done_callback(rt.background.discard)
    return task
