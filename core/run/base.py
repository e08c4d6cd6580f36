"""The runner's shared state and plumbing: construction, views, appends, events, the
system prompt, checkpoints. Each phase of the step machine lives in its own module."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Unpack

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
from core.run.lane import lane_for
from core.run.memory import MemoryStore
from core.run.state import Phase
from core.run.tools import ToolRegistry
from core.run.turn import TurnField, TurnState
from core.skills import SkillRegistry, skill_tool_schema
from core.store import Store
from core.store.writer import Writer
from core.tokens.counter import estimate_prompt_tokens
from core.tool_schema import function_schema

if TYPE_CHECKING:
    from core.llm.client import RequestArgs

INTRINSIC = (
    "goal",
    "skill",
    GET_CURRENT_CONTEXT,
    "compress_context",
    "todo_write",
    "save_memory",
    "read_ref",
)

SHARED_PARTS = ("skills", "events", "slimmers", "clock", "wall_clock")
"""Constructor arguments a child runner takes from its parent (``shared_parts``)."""


class ModelPort(Protocol):
    """What the runner needs of a model: one attempt per call (``ChatClient`` fits)."""

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        on_event: Callable[[StreamEvent], None] | None = None,
        cancel: asyncio.Event | None = None,
        **request: Unpack[RequestArgs],
    ) -> ModelResponse: ...


class RunnerCore:
    """The runner's deps: what every phase (``core/run/runner.py:PHASES``) runs over besides
    the turn, and the plumbing they share; ``Runner`` adds the caller's controls."""

    phase = TurnField[Phase]("phase")
    pending = TurnField[list[ToolCall]]("pending")
    round_calls = TurnField[list[ToolCall]]("round_calls")
    call_message = TurnField["Message | None"]("call_message")
    turn_steps = TurnField[int]("steps")
    final = TurnField["str | None"]("final")
    errors = TurnField[list[str]]("errors")

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
        cancel: asyncio.Event | None = None,
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
            summarizer if self.lane.main_duties else None,  # a subagent does not summarize
            files=FileStateCache(),
        )
        self.monitors = self.config.monitors()
        self.ledger = GrantLedger(self.config.grant_budget())
        self.turn = TurnState()
        """Where the step machine stands in the current turn (``core/run/turn.py``)."""
        self.iteration = 0
        self.max_output: int | None = self.config.max_output_tokens
        """The ``max_tokens`` every request carries (raised by the ladder's EscalateTokens)."""
        self.reported: tuple[int, int] | None = None
        """(prompt tokens the provider reported for the last call, our estimate of that
        request): TOK-2's anchor for ``budget_tokens``."""
        self.session_id: str | None = None
        self.turn_index: int | None = None
        self.generation = 0
        self.pause_requested = False
        """Set by ``pause()``: ``run`` stops before its next step."""
        self.cancel_event = cancel or asyncio.Event()
        """Set by ``cancel()``; a subagent shares its parent's."""
        self.subagent_count = 0
        self.background: set[asyncio.Task[None]] = set()
        """Background work still running (``core/run/subagents.py:run_background``)."""
        self.cache = ContextCache(trace_id, agent_name)
        with store.read() as r:
            meta = r.trace(trace_id).metadata or {}
            self.ref_scope: str = str(meta.get("ref_scope") or trace_id)
            """What ref ids derive from (a replay keeps its source's, ``core/replay``)."""
            self.goals: GoalTree = goal_tree_at(r, trace_id, self.head(r))
            self.generation = r.latest_generation(trace_id)
            self.iteration = self.count_iterations(r)

    def shared_parts(self) -> dict[str, Any]:
        """What a child runner (a subagent, a delegated trace) takes over from this one."""
        return {name: getattr(self, name) for name in SHARED_PARTS}

    def push_notice(self, notice: BackgroundNotice) -> None:
        """A background task finished; its notice is injected before the next model call."""
        self.monitors.notices.push(notice)

    def runtime_state(self) -> dict[str, Any]:
        """What a checkpoint keeps of this runner beyond the store: the monitors, the grant
        ledger and the turn's counters (``core/run/checkpoint.py``)."""
        return {**self._counters_state(), "config": self.config.to_json()}

    def _counters_state(self) -> dict[str, Any]:
        """``runtime_state`` without the config (what every call records: building the
        config's JSON for each call only to drop it cost the run loop per step)."""
        return {
            "iteration": self.iteration,
            "monitors": self.monitors.to_state(),
            "ledger": self.ledger.to_state(),
            "turn_steps": self.turn.steps,
            "last_step": list(self.turn.last_step) if self.turn.last_step is not None else None,
            "final_only": self.turn.final_only,
            "manual_compact": self.turn.manual_compact,
            "subagents": self.subagent_count,
            "reported": list(self.reported) if self.reported else None,
        }

    def prepare_point(self) -> dict[str, Any]:
        """Where the next call's PREPARE started (head, newest compaction) and the runtime
        state then — recorded with the call, so a replay can start exactly there."""
        head, compaction = self.cache.stamp or (None, None)
        state = self._counters_state()
        return {"head": head, "compaction_id": compaction, "state": state}

    def budget_tokens(self) -> int:
        """What the next request weighs, for every budget judgement (compaction trigger,
        nudges): the provider's last reported prompt tokens plus the estimate of what was
        added (or removed) since; the estimate alone before any report (TOK-2)."""
        now = self.cache.total
        if self.reported is None:
            return now
        reported, then = self.reported
        return max(0, estimate_prompt_tokens(reported, [now - then], now))

    def note_usage(self, usage: Mapping[str, Any] | None, estimated: int) -> None:
        """Anchor ``budget_tokens`` at the prompt tokens the provider reported (TOK-2)."""
        prompt = (usage or {}).get("prompt_tokens")
        if isinstance(prompt, int) and not isinstance(prompt, bool) and prompt > 0:
            self.reported = (prompt, estimated)

    def make_room_for_images(self, w: Writer, ref_id: str) -> None:
        """REF-3: before an image grant that would pass the image limit, the oldest images
        in the context become their reference text (``GrantLedger.replace_images``)."""
        if not self.lane.main_duties:
            return
        ref = next((r for r in w.read.refs(self.trace_id) if r.id == ref_id), None)
        if ref is None or not ref.image_blocks:
            return
        view = self.view_in(w)
        keep = self.ledger.budget.max_image_blocks - ref.image_blocks
        if image_blocks_in(view) <= keep:
            return
        event = self.ledger.replace_images(w, self.trace_id, view, keep=max(0, keep))
        if event is not None:
            self.cache.invalidate()
            self.emit(
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

    def head(self, reader: Any) -> int | None:
        """This agent's last message as stored (the trace's head, or its branch's tip)."""
        return self.lane.head(reader, self.trace_id)

    def append(self, w: Writer, msgs: list[NewMessage]) -> list[Message]:
        """Append as this agent, on its lane; the context cache follows."""
        fixed = [self.lane.tag(m, self.agent_name) for m in msgs]
        out = w.append(self.trace_id, fixed, parent=self.lane.parent())
        self.lane.moved(out[-1].sequence)
        self.cache.appended(out)
        return out

    def count_iterations(self, reader: Any) -> int:
        head = self.head(reader)
        if head is None:
            return 0
        return sum(
            1
            for m in reader.iter_main_path(self.trace_id, head=head)
            if m.role == "assistant" and m.kind == "message" and m.agent_name == self.agent_name
        )

    def emit(
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

    def periodic_sources(self) -> ContextSources:
        """What ``get_current_context`` and the periodic injection read (INJ-2)."""
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

    def head_in(self, w: Writer) -> int | None:
        return self.lane.head_in(w, self.trace_id)

    def view_in(self, w: Writer) -> View:
        """This agent's view as of the open transaction (its writes flushed first)."""
        w.flush()
        return agent_view(w.read, self.trace_id, self.head_in(w), self.agent_name)

    # -- checkpoints ------------------------------------------------------------------------
    def checkpoint(self, kind: str) -> None:
        """A context package (``start``, ``compaction``, ``turn``) or a round package."""
        if not self.config.checkpoints or not self.lane.main_duties:
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


def _schema(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return function_schema(name, description, {"type": "object", "properties": properties})


def _read_ref_schema() -> dict[str, Any]:
    from core.refs.read_ref import read_ref_schema

    return read_ref_schema()
