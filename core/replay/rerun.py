"""Re-run a stored trace from any call with other settings, into a new trace.

``replay`` copies the source up to the cut (``core/replay/prefix.py``), serves the recorded
replies through ``RecordedModel`` on a real ``ModelServer``, re-executes the tools (or
answers with the recorded results, ``core/replay/sources.py``) and drives the trace's
runner (``core/run/rerunners.py:make_runner``: the ordinary ``Runner``, or a registered
kind such as a delegation root's ``DelegatingRunner``) with
``RunConfig.from_json(source run_config).with_settings(settings)``. User
messages the source received later (a constraint, the next turn of a session) come back
before the same main-agent call. The new trace records
``metadata.replay_of = {trace, from_call, settings}``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from core.errors import InvalidInputError
from core.exporters.ctxlens_json import export_text
from core.fields_json import fields_json
from core.lineage import replay_title
from core.llm import ChatClient, ModelCompactionSummarizer, ModelServer
from core.llm.settings import ModelSettings
from core.records import Message, NewMessage
from core.replay.calls import CallRef, live_calls, main_calls, trace_calls
from core.replay.compare import basis_counts, call_inputs
from core.replay.endpoint import EndpointModel, describe
from core.replay.prefix import Copied, Cut, copy_prefix, covering, cut_before
from core.replay.recorded import OnDiverge, RecordedModel, ReplayDiverged
from core.replay.recording import Recording
from core.replay.refmap import RefRenamer, scope_of
from core.replay.sources import carried_keys, kit_for
from core.run.config import RunConfig
from core.run.events import EventBus
from core.run.metrics import compute
from core.run.rerunners import make_runner, refusal, rerunner_for, runner_kind
from core.run.runner import Runner
from core.run.state import Phase
from core.store import Store


@dataclass(frozen=True)
class ReplayOptions:
    from_call: int = 0
    """Re-run from this call (a main-agent call; 0 = from the start)."""
    settings: tuple[str, ...] = ()
    """``key=value`` run settings applied on top of the source's (``RunConfig``)."""
    on_diverge: Literal["stop", "live", "auto"] = "auto"
    """After a divergence: stop, or go on with the offline model (auto: live when the
    trace has one, i.e. a demo trace)."""
    title: str | None = None
    max_calls: int | None = None
    """Safety stop (default: three times the source's calls, plus 50)."""
    edit: tuple[int, str] | None = None
    """``(sequence, content)``: that message of the copied prefix gets this content, and
    the run continues from the edit (``core/replay/fork.py``)."""
    endpoint: ModelSettings | None = None
    """A configured endpoint that answers after a divergence (``live``) instead of the
    offline model (``core/replay/endpoint.py``)."""


_METRICS_SHOWN = ("redone_tool_calls", "prefix_cache_reuse", "main_llm_calls")
"""Metrics of the replay that its JSON shows at the top level."""


@dataclass
class ReplayResult:
    trace_id: str
    source: str
    from_call: int
    settings: tuple[str, ...]
    start: str
    on_diverge: str
    stopped: str
    calls: int
    compactions: int
    compaction_levels: dict[str, int]
    input_tokens: int
    """Input tokens of the main agent's calls, summed as the comparison sums them
    (``core/replay/compare.py:call_inputs``: the recorded usage, else ctxlens's count)."""
    diverged: ReplayDiverged | None
    reproduced_calls: int
    recorded_replies: int
    live_replies: int
    metrics: dict[str, Any]
    copied: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    continued_with: str | None = None
    """What answered after the divergence: the demo's scripted model, a configured
    endpoint (its model and URL, never its key), or ``None`` (stopped)."""
    main_calls: int = 0
    """The main agent's answered calls (whose inputs ``input_tokens`` sums)."""
    input_basis: dict[str, int] = field(default_factory=dict)
    """Of those calls, how many inputs are recorded usage and how many ctxlens counted
    (``core/replay/compare.py:basis_counts``)."""
    all_calls: int = 0
    """Answered calls of every agent (subagents and side branches too)."""
    input_tokens_all_calls: int = 0
    input_basis_all_calls: dict[str, int] = field(default_factory=dict)
    input_tokens_counted: int = 0
    """ctxlens's own count of the main agent's contexts (``cumulative_input_tokens`` of
    ``core/run/metrics.py:compute``; what ``input_tokens`` said before hcmp)."""

    def to_json(self) -> dict[str, Any]:
        return {
            **fields_json(self, "trace_id", "calls", "compactions", "input_tokens"),
            **fields_json(self, "main_calls", "input_basis", "all_calls"),
            **fields_json(self, "input_tokens_all_calls", "input_basis_all_calls"),
            **fields_json(self, "input_tokens_counted"),
            "diverged_at": self.diverged.call_index if self.diverged else None,
            "divergence": self.diverged.to_json() if self.diverged else None,
            "source_trace": self.source,
            "from_call": self.from_call,
            "settings": list(self.settings),
            **fields_json(self, "start", "on_diverge", "stopped", "compaction_levels"),
            **fields_json(self, "reproduced_calls", "recorded_replies", "live_replies"),
            **{k: self.metrics.get(k) for k in _METRICS_SHOWN},
            "copied": self.copied,
            "elapsed_s": round(self.elapsed_s, 3),
            "continued_with": self.continued_with,
        }


def replay(store: Store, trace_id: str, opts: ReplayOptions | None = None) -> ReplayResult:
    return asyncio.run(replay_async(store, trace_id, opts or ReplayOptions()))


async def replay_async(
    store: Store, trace_id: str, opts: ReplayOptions, events: EventBus | None = None
) -> ReplayResult:
    started = time.perf_counter()
    with store.read() as r:
        source = r.find_trace(trace_id)
        calls = trace_calls(r, source.id)
        recording = Recording.load(r, source.id, calls)
        live = live_calls(r, source.id, calls)
        refs = r.refs(source.id)
    refused = refusal(source.metadata)  # e.g. a delegation child: only inside its parent
    if refused is not None:
        raise InvalidInputError(f"trace {source.id}: {refused}")
    kind = runner_kind(source.metadata)
    config = _config(source.metadata, recording, opts.settings)
    cut = cut_before(calls, opts.from_call, live)
    if opts.edit is not None:
        cut = covering(cut, calls[opts.from_call], opts.edit[0])
    # what refuses the replay is checked before its trace is made (messages stay: a
    # refusal after it left an empty "Replay of ..." trace in the store)
    if cut.fresh and not recording.user_turns:
        raise InvalidInputError(f"trace {source.id}: no user message to start a replay from")
    offline = rerunner_for(source.metadata) is not None  # ``kit_for``'s oracle: a demo's
    mode = _mode(opts.on_diverge, offline or opts.endpoint is not None)
    target, renamer, copied = _new_trace(store, source, opts, cut, config, refs)
    if kind is not None:  # e.g. a delegation root: the replay is a root of its own
        kind.adopt(store, source.id, target)
    kit = kit_for(source.metadata, recording, renamer, copied.clock_ticks)
    endpoint = EndpointModel(opts.endpoint) if opts.endpoint is not None else None
    model = RecordedModel(
        recording,
        renamer,
        kit.oracle,
        mode,
        start=recording.positions_before(cut.call_index) if not cut.fresh else {},
        strict=opts.edit is not None,
        continuation=endpoint,
    )
    limit = opts.max_calls or 3 * len(calls) + 50
    with ModelServer(model) as server:
        settings = server.settings(model=config.model or "recorded", stream=config.stream)
        async with ChatClient(settings) as client:
            runner = make_runner(
                store,
                target,
                client,
                config,
                store.trace(target).metadata,
                tools=kit.tools,
                slimmers=kit.slimmers,
                summarizer=ModelCompactionSummarizer(client),
                wall_clock=kit.clock,
                events=events,
            )
            stopped = await _drive(runner, recording, live, cut, model, limit)
    return _result(store, target, source.id, opts, cut, mode, stopped, model, copied, started)


def _config(
    metadata: dict[str, Any] | None, recording: Recording, settings: tuple[str, ...]
) -> RunConfig:
    base = (metadata or {}).get("run_config")
    if isinstance(base, dict):
        config = RunConfig.from_json(base)
    else:  # an imported trace: ctxlens's defaults, the source's own system prompt
        config = RunConfig(model="recorded", system_prompt=recording.system_text or None)
    return config.with_settings(list(settings))


def _mode(wanted: str, can_go_on: bool) -> OnDiverge:
    """What follows a divergence: ``live`` needs a model to go on with (a demo's offline
    model or a configured endpoint)."""
    if wanted == "live" and not can_go_on:
        raise InvalidInputError(
            "--on-diverge live: this trace has no offline model to continue with "
            "(only demo traces do); use --on-diverge stop"
        )
    if wanted == "auto":
        return "live" if can_go_on else "stop"
    return "live" if wanted == "live" else "stop"


def _continued_with(mode: str, opts: ReplayOptions) -> str | None:
    if mode == "stop":
        return None
    return describe(opts.endpoint) if opts.endpoint is not None else "the demo's scripted model"


def _new_trace(
    store: Store,
    source: Any,
    opts: ReplayOptions,
    cut: Cut,
    config: RunConfig,
    refs: list[Any],
) -> tuple[str, RefRenamer, Copied]:
    meta = dict(source.metadata or {})
    carried = {k: meta[k] for k in carried_keys() if k in meta}
    scope = scope_of(source.id, meta)
    title = opts.title or replay_title(source.title, opts.from_call, opts.settings)
    metadata = {
        **carried,
        "ref_scope": scope,
        "replay_of": {
            "trace": source.id,
            "from_call": opts.from_call,
            "settings": list(opts.settings),
            **({"edited_sequence": opts.edit[0]} if opts.edit else {}),
        },
        "run_config": config.to_json(),
        "budget": {
            "window": config.window,
            "soft": config.soft_limit,
            "hard": config.hard_limit,
            "compaction_threshold": config.threshold,
        },
    }
    with store.write() as w:
        trace = w.create_trace(title, "ctxlens-replay", metadata)
        renamer = RefRenamer.between(refs, scope, scope)  # the same scope: no renaming
        edits = dict([opts.edit]) if opts.edit else None
        copied = copy_prefix(w, source.id, trace.id, cut, renamer, edits)
    return trace.id, renamer, copied


@dataclass(frozen=True)
class _Interjection:
    before_main: int
    """The main-agent call (0-based, answered calls) it comes before."""
    message: Message


def interjections(
    recording: Recording, calls: list[CallRef], after: int | None
) -> list[_Interjection]:
    """User messages after the task, each placed before the first main call that saw it
    (``after``: only messages past the copied prefix)."""
    heads = [c.head if c.head is not None else -1 for c in main_calls(calls)]
    out = []
    for m in recording.user_turns[1:]:
        if after is not None and m.sequence <= after:
            continue
        j = next((n for n, h in enumerate(heads) if h >= m.sequence), None)
        if j is not None:
            out.append(_Interjection(j, m))
    return out


async def _drive(
    runner: Runner,
    recording: Recording,
    calls: list[CallRef],
    cut: Cut,
    model: RecordedModel,
    limit: int,
) -> str:
    mains = main_calls(calls)
    done = sum(1 for c in mains if c.call_index is None or c.call_index < cut.call_index)
    if cut.fresh:
        if not recording.user_turns:
            raise InvalidInputError("the trace has no user message to start from")
        done = 0
        first = recording.user_turns[0]
        await runner.start_turn(NewMessage("user", first.content, metadata=first.metadata))
    else:
        _open_session(runner)
        if cut.state is not None:
            runner.restore(cut.state)
        runner.reopen(cut.phase)
    queue = deque(interjections(recording, calls, cut.head))
    while True:
        if runner.phase in (Phase.PREPARE, Phase.DONE, Phase.IDLE):
            while queue and queue[0].before_main <= done and not _stopped(model):
                await _interject(runner, queue.popleft().message)
        if runner.phase in (Phase.DONE, Phase.IDLE):
            if not queue or _stopped(model):
                return "diverged" if _stopped(model) else "done"
            await _interject(runner, queue.popleft().message)
        if model.requests > limit:
            return "limit"
        step = await runner.step()
        if step.ran is Phase.MODEL and not step.detail.startswith("model error"):
            done += 1


def _stopped(model: RecordedModel) -> bool:
    return model.diverged is not None and model.on_diverge == "stop"


async def _interject(runner: Runner, m: Message) -> None:
    if runner.phase in (Phase.DONE, Phase.IDLE):
        await runner.start_turn(NewMessage("user", m.content, metadata=m.metadata))
    else:
        runner.add_user_message(m.content, m.metadata)


def _open_session(runner: Runner) -> None:
    with runner.store.write() as w:
        runner.session_id = w.create_session(runner.trace_id, "replay", runner.config.model)
        runner.turn_index = w.start_turn(runner.session_id, None)


def _result(
    store: Store,
    target: str,
    source: str,
    opts: ReplayOptions,
    cut: Cut,
    mode: str,
    stopped: str,
    model: RecordedModel,
    copied: Copied,
    started: float,
) -> ReplayResult:
    metrics = compute(json.loads(export_text(store, target)))
    with store.read() as r:
        n_calls = r.llm_call_count(target)
        compactions = r.compactions(target)
        meta = dict(r.trace(target).metadata or {})
        live = live_calls(r, target, trace_calls(r, target))
        counted: dict[int, int] = {}
        main, main_basis = call_inputs(r, target, main_calls(live), counted)
        every, every_basis = call_inputs(r, target, [c for c in live if c.answered], counted)
    diverged = model.diverged
    if diverged is not None:
        diverged = ReplayDiverged(
            diverged.request,
            diverged.agent,
            diverged.position,
            diverged.source_call,
            diverged.reason,
            copied.calls + diverged.request,
        )
    served = model.served
    result = ReplayResult(
        trace_id=target,
        source=source,
        from_call=opts.from_call,
        settings=opts.settings,
        start=cut.start,
        on_diverge=mode,
        stopped=stopped,
        calls=n_calls,
        compactions=len(compactions),
        compaction_levels=dict(metrics["compactions"]),
        input_tokens=sum(main),
        diverged=diverged,
        reproduced_calls=model.reproduced(),
        recorded_replies=sum(1 for s in served if s.mode == "recorded"),
        live_replies=sum(1 for s in served if s.mode == "live"),
        metrics=metrics,
        copied=copied.to_json(),
        elapsed_s=time.perf_counter() - started,
        continued_with=_continued_with(mode, opts),
        main_calls=len(main),
        input_basis=basis_counts(main_basis),
        all_calls=len(every),
        input_tokens_all_calls=sum(every),
        input_basis_all_calls=basis_counts(every_basis),
        input_tokens_counted=int(metrics["cumulative_input_tokens"]),
    )
    summary = {k: v for k, v in result.to_json().items() if k not in ("trace_id", "settings")}
    with store.write() as w:
        w.update_trace_metadata(target, {**meta, "replay": summary})
    return result
