"""Subagents (RUN-4) and background work of a run."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace

from sqlalchemy import func, select

from core.context.nudges import BackgroundNotice
from core.run.base import RunnerCore
from core.run.config import RunConfig
from core.store import schema as t


def subagent_config(
    rt: RunnerCore, system_prompt: str, max_steps: int | None, skills: tuple[str, ...] | None
) -> RunConfig:
    """The parent's settings with the subagent's prompt, step limit and listed skills."""
    return replace(
        rt.config,
        system_prompt=system_prompt,
        max_steps=max_steps or rt.config.subagent_max_steps,
        inject_skills=(),
        prompt_skills=skills,  # the call site narrows what its prompt lists
    )


def subagent_branch(rt: RunnerCore, agent: str) -> tuple[str, int | None]:
    """``(branch id, last message)`` of subagent ``agent`` forked at this call: the one a
    killed run already started (resumed: continue it, redo nothing), else a new id."""
    recorded = recorded_subagent(rt, agent)
    if recorded:
        return recorded
    return f"{agent}-{uuid.uuid4().hex[:8]}", None


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
