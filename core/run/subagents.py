"""Subagents (RUN-4) and background work of a run."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import func, select

from core.context.nudges import BackgroundNotice
from core.run.base import RunnerCore, _replace_config
from core.run.tools import ToolRegistry
from core.store import schema as t

CHILD_SHARES = ("skills", "events", "slimmers", "clock", "wall_clock")
"""What a child runner (a subagent, a delegated child) takes from its parent as it is."""


def shared_with_child(parent: RunnerCore) -> dict[str, Any]:
    """``parent``'s ``CHILD_SHARES``: keyword arguments of the child runner's constructor."""
    return {name: getattr(parent, name) for name in CHILD_SHARES}


class SubagentSupport(RunnerCore):
    # -- subagents --------------------------------------------------------------------------
    async def spawn_subagent(
        self,
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
        assert self.turn.call_message is not None, "subagents start from a tool call"
        self._subagents += 1
        agent = f"{name}-{self._subagents}"
        config = _replace_config(
            self.config,
            system_prompt=system_prompt,
            max_steps=max_steps or self.config.subagent_max_steps,
            inject_skills=(),
            prompt_skills=skills,  # the call site narrows what its prompt lists
        )
        from core.run.runner import Runner  # the full machine (runner imports this module)

        recorded = self._recorded_subagent(agent)
        child = Runner(
            self.store,
            self.trace_id,
            self.model,
            config,
            tools=tools if tools is not None else self.tools.restricted(),
            hooks=self.hooks,
            agent_name=agent,
            branch_type="subagent",
            branch_id=recorded[0] if recorded else f"{agent}-{uuid.uuid4().hex[:8]}",
            fork_at=self.turn.call_message.sequence,
            **shared_with_child(self),
        )
        child._cancel = self._cancel
        await self.hooks.fire("subagent_start", {"agent": agent, "task": task})
        self._emit("subagent", {"agent": agent, "task": task, "status": "start"})
        if recorded:  # resumed after a kill inside it: continue its own branch, redo nothing
            child.tip = recorded[1]
            child.attach()
        else:
            await child.start_turn(task)
        result = await child.run()
        final = child.final or f"(subagent {agent} stopped: {result.stopped})"
        await self.hooks.fire("subagent_stop", {"agent": agent, "summary": final})
        self._emit("subagent", {"agent": agent, "status": "done", "calls": result.llm_calls})
        return (
            f"[subagent {agent}: {result.llm_calls} model calls, {result.tool_calls} tools]\n"
            + final
        )

    def _recorded_subagent(self, agent: str) -> tuple[str, int] | None:
        """``(branch id, last message)`` of a subagent ``agent`` already forked at this
        call (a run killed inside it and resumed), or ``None``."""
        assert self.turn.call_message is not None
        m = t.messages.c
        with self.store.read() as r:
            root = r.conn.execute(
                select(m.branch_id).where(
                    m.trace_id == self.trace_id,
                    m.parent_sequence == self.turn.call_message.sequence,
                    m.branch_type == "subagent",
                    m.agent_name == agent,
                )
            ).first()
            if root is None:
                return None
            last = r.conn.execute(
                select(func.max(m.sequence)).where(
                    m.trace_id == self.trace_id, m.branch_id == root[0]
                )
            ).scalar_one()
        return str(root[0]), int(last)

    def run_background(self, name: str, work: Callable[[], Awaitable[str]]) -> asyncio.Task[None]:
        """Start background work; its completion notice is injected before a later call."""
        task_id = f"bg-{uuid.uuid4().hex[:8]}"

        async def wrapper() -> None:
            try:
                text = await work()
                self.push_notice(BackgroundNotice(task_id, name, True, text))
            except Exception as exc:
                self.push_notice(BackgroundNotice(task_id, name, False, str(exc)))

        task = asyncio.get_running_loop().create_task(wrapper())
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task
