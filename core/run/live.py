"""Live runners over stored traces: which traces can be continued, against what, and a
context manager that opens the runner (the GUI's Run, Pause and Step).

- A trace of a source that registered a re-runner (``core/run/rerunners.py``; the demo's,
  ``metadata["demo"]``) runs against that source's model, e.g. the demo's scripted model
  served on 127.0.0.1 while the run is open.
- A trace recorded by ``ctxlens run`` (``metadata["run_config"]``) runs against the
  configured endpoint: ``CTXLENS_BASE_URL``, ``CTXLENS_MODEL`` (else the trace's own model)
  and the key from the environment. Without a base URL it cannot run, and says so.
- Anything else (imported sessions, the sample) has no run settings and none of its tools
  here: it cannot be continued.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from core.errors import InvalidInputError
from core.llm.settings import ENV_BASE_URL, ENV_MODEL, ModelConfigError, ModelSettings
from core.records import ToolCall, Trace
from core.run.config import RunConfig
from core.run.events import EventBus, RunEvent
from core.run.rerunners import make_runner, refusal, rerunner_for, toolset
from core.run.resume import resume_point_of
from core.run.state import Phase
from core.store import Store

if TYPE_CHECKING:
    from core.run.runner import Runner

LiveKind = Literal["demo", "endpoint", "unconfigured", "foreign", "nested"]
"""``demo``: a source's own re-runner runs it (the demo is the one registered);
``nested``: it runs only inside another trace's run (a delegated child)."""


class NotRunnableError(InvalidInputError):
    """The trace cannot be continued by a live runner (the message says why)."""


@dataclass(frozen=True)
class LiveSupport:
    """Whether a trace can run live, and against what (or why not), in one line."""

    kind: LiveKind
    detail: str
    model: ModelSettings | None = None

    @property
    def runnable(self) -> bool:
        return self.kind in ("demo", "endpoint")


def live_support(trace: Trace, env: Mapping[str, str] | None = None) -> LiveSupport:
    meta = trace.metadata if isinstance(trace.metadata, dict) else {}
    refused = refusal(meta)  # e.g. a delegation child: it runs only inside its parent
    if refused is not None:
        return LiveSupport("nested", refused)
    rerunner = rerunner_for(meta)
    if rerunner is not None:
        return LiveSupport("demo", rerunner.detail)
    config = meta.get("run_config")
    if not isinstance(config, dict):
        return LiveSupport(
            "foreign",
            f"{trace.source} traces cannot be run: this one was not recorded by the ctxlens "
            "runtime, so its run settings and tools are not here (inspect, rewind and "
            "compact it; or start a new demo run)",
        )
    try:
        model = endpoint_settings(RunConfig.from_json(config), env)
    except ModelConfigError:
        return LiveSupport(
            "unconfigured",
            f"no model endpoint: set {ENV_BASE_URL} (and {ENV_MODEL}, else the trace's "
            f"model {config.get('model')!r} is used) before starting ctxlens to continue "
            "this trace",
        )
    return LiveSupport("endpoint", f"model {model.model} at {model.base_url}", model)


def endpoint_settings(config: RunConfig, env: Mapping[str, str] | None = None) -> ModelSettings:
    """The endpoint from the environment; the model named there, else the trace's own."""
    env = os.environ if env is None else env
    given = {"model": env.get(ENV_MODEL) or config.model, "stream": config.stream}
    if config.fallback_model:
        given["fallback_model"] = config.fallback_model
    return ModelSettings.resolve(given, env)


@asynccontextmanager
async def open_live_run(
    store: Store,
    trace_id: str,
    events: EventBus | None = None,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[Runner]:
    """A runner for ``trace_id`` with its model reachable for as long as the context is
    open. The caller ``attach()``-es it (or starts a turn on a fresh trace). Raises
    ``NotRunnableError`` (saying why) for traces that cannot run."""
    trace = store.trace(trace_id)
    support = live_support(trace, env)
    rerunner = rerunner_for(trace.metadata)
    if support.kind == "demo" and rerunner is not None:
        async with rerunner.open_run(store, trace.id, events) as runner:
            yield runner
        return
    if support.model is None:
        raise NotRunnableError(support.detail)
    async with _endpoint_run(store, trace, support.model, events) as runner:
        yield runner


@asynccontextmanager
async def _endpoint_run(
    store: Store, trace: Trace, model: ModelSettings, events: EventBus | None
) -> AsyncIterator[Runner]:
    from core.llm import ChatClient, ModelCompactionSummarizer

    meta: dict[str, Any] = trace.metadata if isinstance(trace.metadata, dict) else {}
    config = RunConfig.from_json(meta["run_config"])
    config = dataclasses.replace(
        config, model=model.model, fallback_model=model.fallback_model or config.fallback_model
    )
    async with ChatClient(model) as client:
        yield make_runner(  # a delegation tree member gets its DelegatingRunner
            store,
            trace.id,
            client,
            config,
            meta,
            summarizer=ModelCompactionSummarizer(client),
            events=events,
            **_tools(config),
        )


def _tools(config: RunConfig) -> dict[str, Any]:
    offered = toolset(config.extra.get("tools"))
    return {} if offered is None else {"tools": offered.tools, "slimmers": offered.slimmers}


PHASE_TEXT = {
    Phase.IDLE: "no turn open",
    Phase.PREPARE: "before preparing the next context",
    Phase.MODEL: "before the model call",
    Phase.BOOKKEEPING: "after the round's tools: bookkeeping next",
    Phase.DONE: "the turn is finished",
}


def step_text(
    phase: Phase, pending: list[ToolCall], round_size: int = 0, model_call: int | None = None
) -> str:
    """What the next Step does, e.g. ``before tool evidence_window (2 of 3)``."""
    if phase is Phase.TOOLS and pending:
        done = max(0, round_size - len(pending))
        return f"before tool {pending[0].name} ({done + 1} of {max(round_size, done + 1)})"
    if phase is Phase.MODEL and model_call is not None:
        return f"before model call {model_call}"
    return PHASE_TEXT.get(phase, str(phase))


def next_step_text(runner: Runner) -> str:
    """What the runner's next step does."""
    return step_text(runner.phase, runner.pending, len(runner.round_calls), runner.iteration + 1)


def stored_step(reader: Any, trace_id: str) -> tuple[Phase, str]:
    """The phase a runner attached to the head would stand at, and its next step, read
    from the store alone (no runner, no model)."""
    point = resume_point_of(reader, trace_id)
    size = len(point.call_message.tool_calls) if point.call_message is not None else 0
    return point.phase, step_text(point.phase, point.pending, size)


def breaker_text(d: dict[str, Any]) -> str:
    """What a change of the compaction breaker means, in a line."""
    if d["breaker"] == "open":
        return (
            f"compaction breaker open after {d.get('failures')} failures: "
            "automatic compaction paused"
        )
    if d["breaker"] == "half_open":
        return "compaction breaker half-open: one automatic compaction will be tried"
    return "compaction breaker closed: automatic compaction resumed"


def event_text(event: RunEvent) -> str | None:
    """A short line for a status bar, or ``None`` for events not worth one."""
    d = event.data
    if event.type == "tool_call":
        return f"tool {d.get('name')}…"
    if event.type == "tool_result":
        return f"tool {d.get('name')}: {d.get('status')}"
    if event.type == "text_delta":
        return "model answering…"
    if event.type == "thought" or event.type == "usage":
        return "model answered"
    if event.type == "compaction":
        if "breaker" in d:
            return breaker_text(d)
        if "level" not in d:
            return f"compaction {d.get('status')}: {d.get('reason')}"
        return (
            f"compaction {d['level']}: {d.get('tokens_before', 0):,} → "
            f"{d.get('tokens_after', 0):,} tokens"
        )
    if event.type == "injection":
        return f"injected {d.get('skill') or d.get('kind')}"
    if event.type == "grant":
        return f"grant {d.get('ref')}" + (f" refused: {d['refused']}" if "refused" in d else "")
    if event.type == "nudge":
        return f"nudge {d.get('name')}"
    if event.type == "subagent":
        return f"subagent {d.get('agent')} {d.get('status')}"
    who = "" if d.get("agent", "main") == "main" else f"{d['agent']}: "
    if event.type == "error":
        return who + "error: " + str(d.get("error") or d.get("retry") or d.get("recovery") or d)
    if event.type == "done":
        return who + ("the turn is finished" if "final" in d else f"stopped: {d.get('reason')}")
    return None


def fatal_error(event: RunEvent) -> str | None:
    """The text of an error that ended the main agent's turn (not retries, recoveries or a
    subagent's failure, which its parent sees as a tool result)."""
    if event.type == "error" and "error" in event.data and event.data.get("agent") == "main":
        return str(event.data["error"])
    return None
