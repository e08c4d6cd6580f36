"""The step machine (SPEC RUN-1): the ReAct loop as explicit phases a caller can drive.

    PREPARE ──▶ MODEL ──▶ TOOLS (one call per step) ──▶ BOOKKEEPING ──▶ PREPARE … DONE

- PREPARE: background notices and nudges (INJ-5), caller skill (re-)injection (INJ-3),
  compaction when over the threshold (CMP-1..6, or the ``naive`` baseline).
- MODEL: render the View, call the model with retries and the recovery ladder (LLM-3/4),
  record the call (the exact item list and its sha256) and the assistant message.
- TOOLS: duplicate detection, hooks, the tool, slimming into refs (REF-2), grants (REF-3),
  audit log — one tool call per step, so a caller can pause before any tool.
- BOOKKEEPING: grant image blocks, periodic context injection (INJ-2), goal compaction in
  ``on_complete`` mode, checkpoints and trajectory export at the end of a turn.

Every write is its own short transaction; nothing holds the store across an ``await``.
``step()`` runs one phase; ``run()`` steps until done, paused or cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from core.context.compaction import (
    FileStateCache,
)
from core.context.initial import build_initial_context
from core.context.nudges import StepMonitors
from core.errors import ConflictError
from core.goals import goal_tree_at
from core.llm import (
    CallCancelled,
)
from core.records import CompactionEvent, Message, NewMessage, ToolCall
from core.refs import (
    GrantLedger,
)
from core.run import subagents
from core.run.base import INTRINSIC, ModelPort, RunnerCore
from core.run.bookkeeping import bookkeeping
from core.run.compacting import maybe_compact
from core.run.model_step import request_model
from core.run.prepare import prepare
from core.run.resume import main_path_tail, resume_point, turn_facts
from core.run.state import Phase, RunResult, StepResult
from core.run.tool_step import call_tool
from core.run.tools import ToolRegistry
from core.run.turn import TurnState
from core.store.writer import Writer

__all__ = ["INTRINSIC", "PHASES", "ModelPort", "Runner"]

PhaseStep = Callable[[RunnerCore, TurnState], Awaitable[StepResult]]
"""One phase: a function over the runner's parts and the turn, returning what it did and
the phase after it (pydantic-ai's graph nodes: ``run(ctx) -> next node``)."""

PHASES: dict[Phase, PhaseStep] = {
    Phase.PREPARE: prepare,
    Phase.MODEL: request_model,
    Phase.TOOLS: call_tool,
    Phase.BOOKKEEPING: bookkeeping,
}


class Runner(RunnerCore):
    """One agent's step machine over one trace (the main agent, or a subagent branch):
    the caller's controls and the loop; the phases are ``PHASES``."""

    # -- public control -------------------------------------------------------------------
    async def start_turn(
        self, user: str | NewMessage, messages: Sequence[Mapping[str, Any]] = ()
    ) -> Message:
        """Open a turn: system prompt if the trace has none, the user message, task state.
        A system message in ``messages`` (OpenAI shape) is used as the system prompt."""
        self.given_messages = tuple(messages)
        if self.turn.phase not in (Phase.IDLE, Phase.DONE):
            raise ConflictError(f"a turn is already open (phase {self.turn.phase})")
        with self.store.write() as w:
            opened = self.session_id is None and self.lane.main_duties
            resumed = False
            if opened:
                resumed = bool(w.read.sessions(self.trace_id))
                self.session_id = self._session(w)
                meta = w.read.trace(self.trace_id).metadata or {}
                budget = {
                    "window": self.config.window,
                    "soft": self.config.soft_limit,
                    "hard": self.config.hard_limit,
                    "compaction_threshold": self.config.threshold,
                }
                w.update_trace_metadata(
                    self.trace_id,
                    {**meta, "run_config": self.config.to_json(), "budget": budget},
                )
            init = build_initial_context(
                w,
                self.trace_id,
                user,
                self._system_prompt,
                agent_name=self.agent_name,
                parent=self.lane.fork_parent(),
                **self.lane.labels(),
                restore_tasks=self.lane.main_duties,  # a subagent starts fresh (seed B)
            )
            last = init.task_state or init.user
            self.lane.moved(last.sequence)
            if self.session_id is not None:
                self.turn_index = w.start_turn(self.session_id, init.user.sequence)
        self.turn = TurnState.opened(self.turn)
        if opened:
            await self.hooks.fire(
                "session_start", {"session_id": self.session_id, "resumed": resumed}
            )
        self.emit("session", {"user": init.user.content, "turn": self.turn_index})
        if self.generation == 0:
            self.checkpoint("start")  # a run killed before its first round still resumes
        await self.hooks.fire("prompt_submit", {"content": init.user.content})
        return init.user

    def _session(self, w: Writer) -> str:
        """A trace continued by a new process (``ctxlens run --trace``) keeps its session:
        the next turn is numbered after the last one."""
        sessions = w.read.sessions(self.trace_id)
        if sessions:
            return str(sessions[-1]["id"])
        return w.create_session(self.trace_id, model=self.config.model)

    def attach(self) -> Phase:
        """Continue an existing trace from its head (after a rewind, in a new process, in
        the GUI): the phase follows from the last message — calls without results are
        pending tools, a final answer means the turn is done, anything else prepares the
        next model call."""
        with self.store.read() as r:
            head = self.head(r)
            if head is None:
                self.turn.phase = Phase.IDLE
                return self.turn.phase
            point = resume_point(main_path_tail(r, self.trace_id, head))
            self.goals = goal_tree_at(r, self.trace_id, head)
            self.iteration = self.count_iterations(r)
        self.turn = self.turn.attached(point)
        self.emit("state", {"attached": head, "phase": str(self.turn.phase)})
        return self.turn.phase

    def pause(self) -> None:
        """Stop ``run`` before its next step (the current step finishes)."""
        self.pause_requested = True

    def cancel(self) -> None:
        """Stop at once: an in-flight model call or backoff wait is abandoned."""
        self.cancel_event.set()

    def rewind(self, to_sequence: int) -> None:
        """Move the head back (STORE-4); the next step continues from there on a new branch,
        exactly as a runner attached at that point would: the phase follows from the
        messages there, and nothing of the abandoned continuation is kept (turn steps,
        final-only, nudge monitors, deferred grants, the provider's token report)."""
        if not self.lane.main_duties:
            raise ConflictError("rewind a subagent by rewinding its parent trace")
        self.store.rewind(self.trace_id, to_sequence)
        with self.store.read() as r:
            facts = turn_facts(r, self.trace_id, to_sequence, self.agent_name)
            msgs = r.iter_main_path(self.trace_id, head=to_sequence)
            self.compactor.files = FileStateCache.from_messages(msgs, self.compactor.config.files)
        self.monitors = self.config.monitors()
        self.ledger = GrantLedger(self.config.grant_budget())
        self.turn_index = facts.turn_index if facts.turn_index is not None else self.turn_index
        self.reported = facts.reported
        self.max_output = self.config.max_output_tokens
        self.turn = TurnState(steps=facts.steps)
        self.cache.invalidate()
        self.attach()
        self.emit("state", {"rewind": to_sequence, "phase": str(self.turn.phase)})

    def add_constraint(self, text: str) -> Message:
        """A user constraint mid-run (kept by every compaction's summary contract)."""
        msg = self.add_user_message(f"Constraint: {text}", {"constraints": [text]})
        self.emit("injection", {"kind": "constraint", "text": text}, msg.sequence)
        return msg

    def add_user_message(self, content: str, metadata: Mapping[str, Any] | None = None) -> Message:
        """A user message between rounds (an interjection, a replayed user turn, the resume
        instruction); the next model call sees it."""
        nm = NewMessage(
            "user",
            content,
            metadata=dict(metadata) if metadata else None,
            goal_id=self.goals.focus,
            agent_name=self.agent_name,
        )
        with self.store.write() as w:
            (msg,) = self.append(w, [nm])
        return msg

    # -- restoring a run (resume, replay) ---------------------------------------------------
    def restore(self, state: Mapping[str, Any]) -> None:
        """Take back ``runtime_state()`` from a checkpoint (a resumed or replayed run). The
        budget limits stay this run's own; the file cache is rebuilt from stored reads."""
        self.monitors = StepMonitors.from_state(state.get("monitors") or {})
        fresh = self.config.monitors()  # the limits stay this run's own
        self.monitors.budget.soft_limit = self.config.soft_limit
        self.monitors.budget.hard_limit = self.config.hard_limit
        self.monitors.budget.near_ratio = fresh.budget.near_ratio
        self.monitors.todo.after = fresh.todo.after
        self.monitors.duplicates.threshold = fresh.duplicates.threshold
        self.ledger = GrantLedger.from_state(state.get("ledger") or {})
        self.ledger.budget = self.config.grant_budget()
        self.turn.steps = int(state.get("turn_steps") or 0)
        last = state.get("last_step")
        self.turn.last_step = (int(last[0]), [str(n) for n in last[1]]) if last else None
        self.turn.final_only = bool(state.get("final_only"))
        self.turn.manual_compact = bool(state.get("manual_compact"))
        self.subagent_count = int(state.get("subagents") or 0)
        reported = state.get("reported")
        self.reported = (int(reported[0]), int(reported[1])) if reported else None
        with self.store.read() as r:
            head = self.head(r)
            msgs = r.iter_main_path(self.trace_id, head=head) if head is not None else iter(())
            self.compactor.files = FileStateCache.from_messages(msgs, self.compactor.config.files)
        self.cache.invalidate()

    def reopen(
        self,
        at: Phase = Phase.PREPARE,
        call: Message | None = None,
        pending: Sequence[ToolCall] = (),
    ) -> None:
        """Continue an interrupted turn in this process: at ``PREPARE`` or ``MODEL`` (before
        the next model call), or at ``TOOLS`` with the ``pending`` calls of ``call`` (the
        assistant message whose round was cut short) still to execute."""
        if pending and call is None:
            raise ConflictError("pending tool calls need the assistant message that made them")
        self.turn.end_round()
        if call is not None and pending:
            self.turn.start_round(call)
            self.turn.pending = list(pending)
        self.turn.final = None
        self.turn.errors = []
        self.turn.phase = Phase.TOOLS if pending else at

    async def run(
        self, max_steps: int | None = None, pause_at: Collection[Phase] = ()
    ) -> RunResult:
        """Step until the turn is done, ``pause()`` is called, ``max_steps`` steps ran, or
        (after at least one step) the machine stands at a phase in ``pause_at`` — e.g.
        ``{Phase.MODEL}`` pauses before the next model call, ``{Phase.TOOLS}`` before the
        next tool."""
        self.pause_requested = False
        result = RunResult()
        while self.turn.phase not in (Phase.DONE, Phase.IDLE):
            if self.pause_requested or (result.steps and self.turn.phase in pause_at):
                result.stopped = "paused"
                return result
            if self.cancel_event.is_set():
                result.stopped = "cancelled"
                return result
            if max_steps is not None and result.steps >= max_steps:
                result.stopped = "max_steps"
                return result
            try:
                step = await self.step()
            except CallCancelled:
                result.stopped = "cancelled"
                return result
            result.steps += 1
            if step.ran is Phase.MODEL:
                result.llm_calls += 1
            elif step.ran is Phase.TOOLS:
                result.tool_calls += 1
        result.final = self.turn.final
        result.errors = list(self.turn.errors)
        result.stopped = "error" if self.turn.errors else "done"
        if self.turn.phase is Phase.DONE and self.lane.main_duties:
            await self.hooks.fire(
                "session_stop",
                {
                    "session_id": self.session_id,
                    "stopped": result.stopped,
                    "final": self.turn.final,
                },
            )
        return result

    async def step(self) -> StepResult:
        """Run exactly one phase and return what it did; the turn moves to its ``next``."""
        step = PHASES.get(self.turn.phase)
        if step is None:
            raise ConflictError(
                f"nothing to step: the machine is {self.turn.phase}; start a turn first"
            )
        result = await step(self, self.turn)
        self.turn.phase = result.next
        return result

    # -- what tools and callers ask of a running agent ------------------------------------
    async def compact_now(self, level: str = "auto") -> CompactionEvent | None:
        """Manual compaction from the UI or CLI: bypasses and resets the breaker."""
        return await maybe_compact(self, manual=True, level=level)

    async def spawn_subagent(
        self,
        task: str,
        *,
        name: str = "sub",
        system_prompt: str,
        tools: ToolRegistry | None = None,
        max_steps: int | None = None,
        skills: tuple[str, ...] | None = None,
        background: bool = False,
    ) -> str:
        """Run a subagent (RUN-4) on its own branch: fresh context, restricted tools, own
        compaction and duplicate detection, at most ``max_steps`` model calls then a forced
        final answer; only its final text returns to the parent. ``skills``: what its
        system prompt lists (``None``: all). ``background``: return at once; the final
        text arrives as a notice before a later model call (``run_background``)."""
        assert self.turn.call_message is not None, "subagents start from a tool call"
        self.subagent_count += 1
        agent = f"{name}-{self.subagent_count}"
        config = subagents.subagent_config(self, system_prompt, max_steps, skills)
        branch_id, tip = subagents.subagent_branch(self, agent)
        child = Runner(
            self.store,
            self.trace_id,
            self.model,
            config,
            tools=tools if tools is not None else self.tools.restricted(),
            hooks=self.hooks,
            agent_name=agent,
            branch_type="subagent",
            branch_id=branch_id,
            fork_at=self.turn.call_message.sequence,
            cancel=self.cancel_event,
            **self.shared_parts(),
        )
        if background:
            self.run_background(agent, lambda: self._run_subagent(child, task, tip))
            return f"[subagent {agent} started in the background: its answer follows as a notice]"
        return await self._run_subagent(child, task, tip)

    async def _run_subagent(self, child: Runner, task: str, tip: int | None) -> str:
        agent = child.agent_name
        await self.hooks.fire("subagent_start", {"agent": agent, "task": task})
        self.emit("subagent", {"agent": agent, "task": task, "status": "start"})
        if tip is not None:  # resumed after a kill inside it: continue its own branch
            child.lane.moved(tip)
            child.attach()
        else:
            await child.start_turn(task)
        result = await child.run()
        final = child.final or f"(subagent {agent} stopped: {result.stopped})"
        await self.hooks.fire("subagent_stop", {"agent": agent, "summary": final})
        self.emit("subagent", {"agent": agent, "status": "done", "calls": result.llm_calls})
        calls = f"{result.llm_calls} model calls, {result.tool_calls} tools"
        return f"[subagent {agent}: {calls}]\n" + final

    def run_background(self, name: str, work: Callable[[], Awaitable[str]]) -> asyncio.Task[None]:
        """Background work whose notice reaches a later call (``subagents.run_background``)."""
        return subagents.run_background(self, name, work)
