"""Resume a run in a new process from its latest (or a chosen) checkpoint (STORE-5, seed C).

1. Pick the checkpoint: the latest, or ``checkpoint=G``. An older one than the latest is
   stale — a conflict — unless ``rewind`` says to go back to it (its head becomes the head;
   later messages stay as an abandoned branch, STORE-4).
2. Claim the trace BEFORE writing anything else: a ``resume`` checkpoint written at the
   generation that was read. A second process resuming from the same generation loses
   that write (``CheckpointConflict``) and has written nothing. A latest checkpoint of
   type ``resume`` means another process holds the trace; taking over needs
   ``checkpoint=G`` explicitly.
3. Restore the runtime state from the package (monitors, grant ledger, turn counters;
   goals, iteration and the file cache come from the store), and continue where the run
   stood: a round cut short by the kill first executes its unanswered tool calls; then
   the user message "continue from where you stopped; do not redo completed steps" (with
   the completed and pending steps from the run's records) precedes the next model call.

The model and tools come from the trace: its source's re-runner (``core/run/rerunners.py``;
the demo's scripted model and world), or a ``ctxlens run`` trace's endpoint
(``metadata.run.base_url`` or ``base_url``) and offered tools.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from core.context.compaction import RESUME, load_records
from core.errors import CheckpointConflict, ConflictError, InvalidInputError, NotFoundError
from core.exporters.ctxlens_json import export_text
from core.llm import ChatClient, ModelCompactionSummarizer, ModelServer, ModelSettings
from core.records import Checkpoint
from core.run.config import RunConfig
from core.run.metrics import compute
from core.run.rerunners import (
    Rerunner,
    Toolset,
    make_runner,
    offered_tools,
    refusal,
    rerunner_for,
    toolset,
)
from core.run.resume import ResumePoint, main_path_tail, resume_point
from core.run.runner import Runner
from core.run.state import Phase
from core.run.tools import ToolRegistry
from core.store import Store


@dataclass(frozen=True)
class ResumeOptions:
    checkpoint: int | None = None
    """Generation to resume from (default: the latest)."""
    rewind: bool = False
    """Allow an older checkpoint than the latest: move the head back to it."""
    base_url: str | None = None
    model: str | None = None
    """For a ``ctxlens run`` trace: the endpoint (default: what the trace recorded)."""
    max_steps: int | None = None


@dataclass
class ResumeResult:
    trace_id: str
    status: str
    """resumed | finished (nothing to do: the run had given its final answer)."""
    resumed_from: int
    generation: int | None
    """The generation this process claimed (``None`` when nothing was written)."""
    checkpoint_type: str
    head_before: int | None
    rewound_to: int | None = None
    pending_tools: int = 0
    calls: int = 0
    stopped: str = ""
    final: str | None = None
    metrics: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        m = self.metrics or {}
        return {
            "trace_id": self.trace_id,
            "status": self.status,
            "resumed_from": self.resumed_from,
            "checkpoint_type": self.checkpoint_type,
            "generation": self.generation,
            "head_before": self.head_before,
            "rewound_to": self.rewound_to,
            "pending_tools": self.pending_tools,
            "calls": self.calls,
            "stopped": self.stopped,
            "final": self.final,
            "redone_tool_calls": m.get("redone_tool_calls"),
            "llm_calls": m.get("llm_calls"),
        }


def resume(store: Store, trace_id: str, opts: ResumeOptions | None = None) -> ResumeResult:
    return asyncio.run(resume_async(store, trace_id, opts or ResumeOptions()))


async def resume_async(store: Store, trace_id: str, opts: ResumeOptions) -> ResumeResult:
    with store.read() as r:
        trace = r.find_trace(trace_id)
        cps = r.checkpoints(trace.id)
        calls_before = r.llm_call_count(trace.id)
    meta = trace.metadata or {}
    if not cps and opts.checkpoint is None:
        chosen, latest = _from_log(trace.id), 0
        package: dict[str, Any] = {}
    else:
        if not cps:
            raise NotFoundError(f"trace {trace.id} has no checkpoint {opts.checkpoint}")
        found, newest = _choose(trace.id, cps, opts)
        chosen, latest = found, newest.generation
        package = json.loads(store.read_checkpoint(found))
    _check_resumable(meta, opts)
    head = package.get("head") if opts.rewind else trace.head
    point = _where(store, trace.id, head)
    result = ResumeResult(trace.id, "finished", chosen.generation, None, chosen.type, trace.head)
    if point.phase is Phase.DONE:
        result.final = point.final
        return result  # the run had finished: nothing to do, nothing written
    rerunner = rerunner_for(meta)
    if point.phase is Phase.IDLE and rerunner is None:
        raise InvalidInputError(
            f"trace {trace.id} was stopped before its first message: its task is not "
            "recorded, so there is nothing to resume (run it again)"
        )
    claimed = _claim(store, trace.id, latest, package, chosen.generation)
    result.status, result.generation = "resumed", claimed
    if point.phase is Phase.IDLE and rerunner is not None:  # killed before its first message
        return await _from_start(store, trace.id, result, calls_before, rerunner)
    if opts.rewind and head is not None and head != trace.head:
        store.rewind(trace.id, head)
        result.rewound_to = head
    config = RunConfig.from_json(
        (package.get("runtime") or {}).get("config") or meta.get("run_config") or {}
    )
    if opts.max_steps:
        config = config.with_settings([f"max_steps={opts.max_steps}"])
    ticks = _clock_readings(store, trace.id)
    async with _model(meta, config, opts, ticks) as (client, tools, slimmers, clock, user):
        runner = make_runner(
            store,
            trace.id,
            client,
            config,
            meta,
            tools=tools,
            slimmers=slimmers,
            summarizer=ModelCompactionSummarizer(client),
            wall_clock=clock,
        )
        runner.restore(package.get("runtime") or {})
        _open_turn(runner)
        result.pending_tools = len(point.pending)
        runner.reopen(Phase.PREPARE, point.call_message, point.pending)
        note = _note(store, trace.id, chosen.generation)
        noted = False
        while runner.phase is not Phase.DONE:
            if not noted and runner.phase is Phase.PREPARE:
                runner.add_user_message(note, {"resume": {"checkpoint": chosen.generation}})
                noted = True
            user(runner)
            await runner.step()
    result.final = runner.final
    result.stopped = "done" if runner.final is not None else "error"
    with store.read() as r:
        result.calls = r.llm_call_count(trace.id) - calls_before
    result.metrics = compute(json.loads(export_text(store, trace.id)))
    return result


async def _from_start(
    store: Store, trace_id: str, result: ResumeResult, calls_before: int, rerunner: Rerunner
) -> ResumeResult:
    """The source's whole turn, as ``ctxlens demo`` runs it (its task is known)."""
    async with rerunner.open_run(store, trace_id, None) as runner:
        await rerunner.drive(runner)
    result.final = runner.final
    result.stopped = "done" if runner.final is not None else "error"
    with store.read() as r:
        result.calls = r.llm_call_count(trace_id) - calls_before
    result.metrics = compute(json.loads(export_text(store, trace_id)))
    return result


def _from_log(trace_id: str) -> Checkpoint:
    """A run killed before its first checkpoint resumes from its messages alone: the
    stand-in for a checkpoint (generation 0, type ``log``; its config from the trace)."""
    return Checkpoint(
        id=0,
        trace_id=trace_id,
        generation=0,
        type="log",
        object_key="",
        token_count=0,
        sha256="",
        size=0,
        created_at=time.time(),
    )


def _choose(
    trace_id: str, cps: list[Checkpoint], opts: ResumeOptions
) -> tuple[Checkpoint, Checkpoint]:
    latest = cps[-1]
    if opts.checkpoint is None:
        if latest.type == "resume":
            raise ConflictError(
                f"trace {trace_id} is being resumed by another process (checkpoint "
                f"{latest.generation}, {time.ctime(latest.created_at)}); if that process is "
                f"gone, take over with --checkpoint {latest.generation}"
            )
        return latest, latest
    chosen = next((c for c in cps if c.generation == opts.checkpoint), None)
    if chosen is None:
        gens = f"{cps[0].generation}..{latest.generation}"
        raise NotFoundError(f"trace {trace_id}: no checkpoint {opts.checkpoint} (it has {gens})")
    if chosen.generation < latest.generation and not opts.rewind:
        raise CheckpointConflict(
            f"trace {trace_id}: checkpoint {chosen.generation} is stale (the latest is "
            f"{latest.generation}, {latest.type}); resume from the latest, or pass --rewind "
            f"to go back to {chosen.generation}"
        )
    return chosen, latest


def _check_resumable(meta: dict[str, Any], opts: ResumeOptions) -> None:
    refused = refusal(meta)  # e.g. a delegation child: it runs only inside its parent
    if refused is not None:
        raise InvalidInputError(f"resume: {refused}")
    if rerunner_for(meta) is not None:
        return
    if not isinstance(meta.get("run_config"), dict):
        raise InvalidInputError(
            "this trace was not made by a ctxlens run: its model and tools are unknown, so it "
            "cannot be resumed (replay it instead: ctxlens replay)"
        )
    run: dict[str, Any] = meta["run"] if isinstance(meta.get("run"), dict) else {}
    if not (opts.base_url or run.get("base_url")):
        raise InvalidInputError("resume: the trace has no recorded endpoint; pass --base-url")


def _where(store: Store, trace_id: str, head: int | None) -> ResumePoint:
    """Where a runner continues at ``head``: read from the last messages of the path only
    (``core/run/resume.py:resume_point``, the same rule the GUI's attach uses)."""
    if head is None:
        return ResumePoint(Phase.IDLE)
    with store.read() as r:
        return resume_point(main_path_tail(r, trace_id, head))


def _claim(
    store: Store, trace_id: str, generation: int, package: dict[str, Any], source: int
) -> int:
    """Write the ``resume`` checkpoint at ``generation`` (the first write of this process)."""
    claim = {**package, "resumedFrom": source, "resumedAt": time.time(), "pid": os.getpid()}
    payload = json.dumps(claim, sort_keys=True, ensure_ascii=False).encode()
    used = int((package.get("contextBudget") or {}).get("usedTokens") or 0)
    with store.write() as w:
        cp = w.write_checkpoint(trace_id, generation, "resume", payload, used)
    return cp.generation


def _open_turn(runner: Runner) -> None:
    with runner.store.write() as w:
        sessions = w.read.sessions(runner.trace_id)
        if sessions:
            runner.session_id = str(sessions[-1]["id"])
        else:
            runner.session_id = w.create_session(runner.trace_id, "resumed", runner.config.model)
        runner.turn_index = w.start_turn(runner.session_id, None)


def _clock_readings(store: Store, trace_id: str) -> int:
    """How often the run read its wall clock (one ``get_current_context`` result each)."""
    with store.read() as r:
        return len(r.search(trace_id, role="tool", tool_name="get_current_context", limit=10**9))


def _note(store: Store, trace_id: str, generation: int) -> str:
    """The resume instruction, with the run's own record of what is done and what is left."""
    with store.read() as r:
        records = load_records(r, trace_id)
    lines = [f"[Resumed in a new process from checkpoint {generation}] {RESUME}"]
    done = records.completed_steps()
    if done:
        lines += ["Completed steps:", *(f"- {s}" for s in done)]
    left = records.pending_items()
    if left:
        lines += ["Pending:", *(f"- {s}" for s in left)]
    return "\n".join(lines)


User = Callable[[Runner], None]


@asynccontextmanager
async def _model(
    meta: dict[str, Any], config: RunConfig, opts: ResumeOptions, ticks: int
) -> AsyncIterator[tuple[ChatClient, ToolRegistry, Any, Callable[[], float], User]]:
    """The trace's model (and tools, slimmers, clock, scripted user) for this process."""
    rerunner = rerunner_for(meta)
    if rerunner is not None:
        kit = rerunner.kit(meta, ticks)
        with ModelServer(kit.model) as server:
            settings = server.settings(model=config.model, stream=config.stream)
            async with ChatClient(settings) as client:
                tools = kit.toolset
                yield client, tools.tools, tools.slimmers, kit.clock, _once(rerunner.user)
        return
    run: dict[str, Any] = meta["run"] if isinstance(meta.get("run"), dict) else {}
    settings = ModelSettings.resolve(
        base_url=opts.base_url or run.get("base_url"),
        model=opts.model or config.model,
        fallback_model=config.fallback_model,
        stream=config.stream,
    )
    offered = toolset(offered_tools(meta)) or Toolset(ToolRegistry())
    async with ChatClient(settings) as client:
        yield client, offered.tools, offered.slimmers, time.time, lambda runner: None


def _once(install: User) -> User:
    """The source's user, as its own runs install it (the demo's constraint hook): added
    once, on the first step; it knows whether the path already carries what it adds."""
    installed: set[int] = set()

    def user(runner: Runner) -> None:
        if id(runner) not in installed:
            install(runner)
            installed.add(id(runner))

    return user
