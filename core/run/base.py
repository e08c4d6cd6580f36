"""The runner's shared state and plumbing: construction, views, appends, events, the
system prompt, checkpoints. Each phase of the step machine lives in its own module."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from core.context.compaction import (
    Compactor,
    FileStateCache,
    Summarizer,
)
from core.context.nudges import BackgroundNotice
from core.context.periodic import (
    GET_CURRENT_CONTEXT,
    ContextSources,
    InjectionHooks,
    get_current_context_schema,
)
from core.context.system_prompt import ToolLine, build_system_prompt
from core.context.view import View
from core.goals import GOAL_TOOL_SCHEMA, GoalTree, compact_view, goal_tree_at
from core.llm import (
    ModelResponse,
)
from core.llm.clock import Clock
from core.llm.response import StreamEvent
from core.records import Message, NewMessage, ToolCall
from core.refs import (
    GrantLedger,
    SlimmerRegistry,
)
from core.refs.images import image_blocks_in
from core.run.agent_view import agent_view
from core.run.config import RunConfig
from core.run.context_cache import ContextCache
from core.run.events import EventBus, EventType, RunEvent
from core.run.hooks import Hooks
from core.run.lane import SideBranch, lane_for
from core.run.memory import MemoryStore
from core.run.state import Phase
from core.run.tools import ToolRegistry
from core.run.turn import TurnField, TurnState
from core.skills import SkillRegistry, skill_tool_schema
from core.store import Store
from core.store.writer import Writer
from core.tokens.counter import estimate_prompt_tokens
from core.tool_schema import function_schema

INTRINSIC = (
    "goal",
    "skill",
    GET_CURRENT_CONTEXT,
    "compress_context",
    "todo_write",
    "save_memory",
    "read_ref",
)


class ModelPort(Protocol):
    """What the runner needs of a model: one attempt per call (``ChatClient`` fits)."""

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        model: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
        on_event: Callable[[StreamEvent], None] | None = None,
        cancel: asyncio.Event | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> ModelResponse: ...


class RunnerCore:
    """State shared by the phases; ``core/run/runner.py:Runner`` puts them together."""

    phase = TurnField[Phase]("phase")
    pending = TurnField[list[ToolCall]]("pending")
    round_calls = TurnField[list[ToolCall]]("round_calls")
    call_message = TurnField["Message | None"]("call_message")
    turn_steps = TurnField[int]("steps")
    final = TurnField["str | None"]("final")
    errors = TurnField[list[str]]("errors")

    @property
    def branch_type(self) -> str | None:
        return self.lane.branch_type

    @property
    def branch_id(self) -> str | None:
        return self.lane.branch_id

    @property
    def tip(self) -> int | None:
        """A side branch's last message (``None`` on the main path)."""
        return self.lane.tip if isinstance(self.lane, SideBranch) else None

    @tip.setter
    def tip(self, sequence: int | None) -> None:
        if isinstance(self.lane, SideBranch):
            self.lane.tip = sequence

    def __init__(
        self,
        store: Store,
        trace_id: str,
        model: ModelPort,
        config: RunConfig | None = None,
        *,
        tools: ToolRegistry | None = None,
        skills: SkillRegistry | None = None,
        hooks: Hooks | None = None,
        events: EventBus | None = None,
        slimmers: SlimmerRegistry | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
        wall_clock: Callable[[], float] = time.time,
        agent_name: str = "main",
        branch_type: str | None = None,
        branch_id: str | None = None,
        fork_at: int | None = None,
        memory: MemoryStore | None = None,
        context: ContextSources | None = None,
    ) -> None:
        self.store = store
        self.context_sources = context
        """What a caller feeds the periodic context (collaborators, notifications,
        injection hooks; INJ-2); time and goals are the run's own."""
        self.given_messages: tuple[Mapping[str, Any], ...] = ()
        """Messages the caller gave ``start_turn``; a system message among them is the
        system prompt (INJ-1)."""
        self.trace_id = trace_id
        self.model = model
        self.config = config or RunConfig()
        self.tools = tools or ToolRegistry()
        self.skills = skills or SkillRegistry.load()
        self.hooks = hooks or Hooks()
        self.events = events or EventBus()
        self.slimmers = slimmers
        self.clock = clock
        self.wall_clock = wall_clock
        self.agent_name = agent_name
        self.lane = lane_for(branch_type, branch_id, fork_at)
        """Main path or side branch: where appends go and which duties are this agent's."""
        self.memory = memory or (
            MemoryStore(Path(self.config.memory_dir)) if self.config.memory_dir else None
        )
        self.compactor = Compactor(
            self.config.compaction_config(),
            summarizer if agent_name == "main" else None,
            files=FileStateCache(),
        )
        self.monitors = self.config.monitors()
        self.ledger = GrantLedger(self.config.grant_budget())
        self.turn = TurnState()
        """Where the step machine stands in the current turn (``core/run/turn.py``)."""
        self.iteration = 0
        self._max_output: int | None = self.config.max_output_tokens
        self._reported: tuple[int, int] | None = None
        """(prompt tokens the provider reported for the last call, our estimate of that
        request): TOK-2's anchor for ``budget_tokens``."""
        self.session_id: str | None = None
        self.turn_index: int | None = None
        self.generation = 0
        self._pause = False
        self._cancel = asyncio.Event()
        self._subagents = 0
        self._background: set[asyncio.Task[None]] = set()
        self.cache = ContextCache(trace_id, agent_name)
        with store.read() as r:
            meta = r.trace(trace_id).metadata or {}
            self.ref_scope: str = str(meta.get("ref_scope") or trace_id)
            """What ref ids derive from (a replay keeps its source's, ``core/replay``)."""
            self.goals: GoalTree = goal_tree_at(r, trace_id, self._head(r))
            self.generation = r.latest_generation(trace_id)
            self.iteration = self._count_iterations(r)

    def push_notice(self, notice: BackgroundNotice) -> None:
        """A background task finished; its notice is injected before the next model call."""
        self.monitors.notices.push(notice)

    def runtime_state(self) -> dict[str, Any]:
        """What a checkpoint keeps of this runner beyond the store: the monitors, the grant
        ledger and the turn's counters (``core/run/checkpoint.py``)."""
        return {
            "iteration": self.iteration,
            "monitors": self.monitors.to_state(),
            "ledger": self.ledger.to_state(),
            "config": self.config.to_json(),
            "turn_steps": self.turn.steps,
            "last_step": list(self.turn.last_step) if self.turn.last_step is not None else None,
            "final_only": self.turn.final_only,
            "manual_compact": self.turn.manual_compact,
            "subagents": self._subagents,
            "reported": list(self._reported) if self._reported else None,
        }

    def _prepare_point(self) -> dict[str, Any]:
        """Where the next call's PREPARE started (head, newest compaction) and the runtime
        state then — recorded with the call, so a replay can start exactly there."""
        head, compaction = self.cache.stamp or (None, None)
        state = {k: v for k, v in self.runtime_state().items() if k != "config"}
        return {"head": head, "compaction_id": compaction, "state": state}

    def budget_tokens(self) -> int:
        """What the next request weighs, for every budget judgement (compaction trigger,
        nudges): the provider's last reported prompt tokens plus the estimate of what was
        added (or removed) since; the estimate alone before any report (TOK-2)."""
        now = self.cache.total
        if self._reported is None:
            return now
        reported, then = self._reported
        return max(0, estimate_prompt_tokens(reported, [now - then], now))

    def _note_usage(self, usage: Mapping[str, Any] | None, estimated: int) -> None:
        prompt = (usage or {}).get("prompt_tokens")
        if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt > 0:
            self._reported = (prompt, estimated)

    def _make_room_for_images(self, w: Writer, ref_id: str) -> None:
        """REF-3: before an image grant that would pass the image limit, the oldest images
        in the context become their reference text (``GrantLedger.replace_images``)."""
        if not self.lane.main_duties:
            return
        ref = next((r for r in w.read.refs(self.trace_id) if r.id == ref_id), None)
        if ref is None or not ref.image_blocks:
            return
        view = self._view_in(w)
        keep = self.ledger.budget.max_image_blocks - ref.image_blocks
        if image_blocks_in(view) <= keep:
            return
        event = self.ledger.replace_images(w, self.trace_id, view, keep=max(0, keep))
        if event is not None:
            self.cache.invalidate()
            self._emit(
                "compaction",
                {"level": "images", "replaced": len((event.details or {}).get("replaced", []))},
                event.at_sequence,
            )

    # -- views and appends -------------------------------------------------------------------
    def view(self) -> View:
        """What the next model call would receive (from the in-memory cache; rebuilt from
        the store whenever anything else changed the trace)."""
        with self.store.read() as r:
            return self.cache.view(r, self.lane.view_head())

    def _head(self, reader: Any) -> int | None:
        return self.lane.head(reader, self.trace_id)

    def _append(self, w: Writer, msgs: list[NewMessage]) -> list[Message]:
        fixed = [
            _with(
                m,
                agent_name=self.agent_name,
                branch_type=self.lane.branch_type,
                branch_id=self.lane.branch_id,
            )
            for m in msgs
        ]
        out = w.append(self.trace_id, fixed, parent=self.lane.parent())
        self._moved(out[-1].sequence)
        self.cache.appended(out)
        return out

    def _moved(self, sequence: int) -> None:
        self.lane.moved(sequence)

    def _count_iterations(self, reader: Any) -> int:
        head = self._head(reader)
        if head is None:
            return 0
        return sum(
            1
            for m in reader.iter_main_path(self.trace_id, head=head)
            if m.role == "assistant" and m.kind == "message" and m.agent_name == self.agent_name
        )

    def _emit(
        self,
        type: EventType,
        data: dict[str, Any] | None = None,
        sequence: int | None = None,
        call_id: str | None = None,
    ) -> None:
        self.events.emit(
            RunEvent(
                type,
                self.trace_id,
                {"agent": self.agent_name, **(data or {})},
                sequence,
                call_id,
                self.iteration,
            )
        )

    # -- system prompt ------------------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        schemas: list[dict[str, Any]] = [
            GOAL_TOOL_SCHEMA,
            skill_tool_schema(),
            get_current_context_schema(),
            _schema("compress_context", "Compact the context now (manual compaction).", {}),
            _schema(
                "todo_write",
                "Replace the task list: todos = [{id, content, status}].",
                {"todos": {"type": "array", "items": {"type": "object"}}},
            ),
            _schema(
                "save_memory",
                "Save a project memory (type: user|feedback|project|reference).",
                {"type": {"type": "string"}, "content": {"type": "string"}},
            ),
            _read_ref_schema(),
        ]
        return schemas + [t.schema() for t in self.tools.tools.values()]

    def _system_prompt(self) -> Any:
        lines = [
            ToolLine(s["function"]["name"], s["function"]["description"])
            for s in self.tool_schemas()
        ]
        memories = [m.content for m in reversed(self.memory.recent())] if self.memory else []
        return build_system_prompt(
            messages=self.given_messages,
            config_prompt=self.config.system_prompt,
            preset_prompt=self.config.preset_prompt,
            default_identity=self.config.identity,
            tools=lines,
            skills=self.skills.select(self.config.prompt_skills),
            memories=memories,
        )

    def _sources(self) -> ContextSources:
        given = self.context_sources
        return ContextSources(
            clock=self.wall_clock,
            goal_view=lambda: compact_view(self.goals),
            focus=self._focus_text,
            collaborators=given.collaborators if given else None,
            notifications=given.notifications if given else None,
            hooks=given.hooks if given else InjectionHooks(),
        )

    def _focus_text(self) -> str | None:
        focus = self.goals.focus
        if focus is None:
            return None
        goal = self.goals.get(focus)
        return f"{focus} {goal.title}" if goal is not None else focus

    def _tip_or_head(self, w: Writer) -> int | None:
        return self.lane.head_in(w, self.trace_id)

    def _view_in(self, w: Writer) -> View:
        """This agent's view as of the open transaction (its writes flushed first)."""
        w.flush()
        return agent_view(w.read, self.trace_id, self._tip_or_head(w), self.agent_name)

    # -- checkpoints ------------------------------------------------------------------------
    def _checkpoint(self, kind: str) -> None:
        if not self.config.checkpoints or self.agent_name != "main":
            return
        from core.run.checkpoint import context_package, round_package

        with self.store.read() as r:
            if kind == "round":
                package = round_package(r, self.trace_id, self)
            else:
                package = context_package(r, self.trace_id, self, done=kind == "turn")
        payload = json.dumps(package, sort_keys=True, ensure_ascii=False).encode()
        with self.store.write() as w:
            cp = w.write_checkpoint(
                self.trace_id,
                self.generation,
                kind,
                payload,
                package["contextBudget"]["usedTokens"],
            )
        self.generation = cp.generation


def _with(nm: NewMessage, **changes: Any) -> NewMessage:
    from dataclasses import replace

    return replace(nm, **changes)


def _replace_config(config: RunConfig, **changes: Any) -> RunConfig:
    from dataclasses import replace

    return replace(config, **changes)


def _schema(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return function_schema(name, description, {"type": "object", "properties": properties})


def _read_ref_schema() -> dict[str, Any]:
    from core.refs.read_ref import read_ref_schema

    return read_ref_schema()
