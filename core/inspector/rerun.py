"""The "Re-run with…" dialog's choices and its run (issue 9, part 2, in the window).

The dialog edits a few run settings (``RERUN_SETTINGS``, defaults from the source's
``run_config``) and free ``key=value`` pairs; ``settings_pairs`` turns them into the
``ReplayOptions.settings`` of ``core/replay/rerun.py`` (only what differs from the source),
validated by ``RunConfig.with_settings`` so a typo is refused before anything is written.
``run_rerun`` is blocking (its own event loop; call it off the UI thread): it reports calls
replayed through the run's event stream and stops when ``cancel`` is set, leaving the
partial trace it wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from core.context.compaction.config import GOAL_MODES
from core.errors import InvalidInputError
from core.inspector.wording import counted
from core.replay.calls import live_calls, main_calls, trace_calls
from core.replay.compare import counts_text
from core.replay.rerun import ReplayOptions, ReplayResult, replay_async
from core.run.config import RunConfig
from core.run.events import EventBus, RunEvent
from core.store import Store
from core.store.reader import Reader


@dataclass(frozen=True)
class Setting:
    key: str
    """A ``RunConfig`` field."""
    label: str
    kind: Literal["int", "float", "choice"]
    choices: tuple[str, ...] = ()
    minimum: float = 0
    maximum: float = 10_000_000
    help: str = ""


RERUN_SETTINGS = (
    Setting("window", "Context window", "int", minimum=256,
            help="Tokens the model can take; the threshold is a share of it"),
    Setting("threshold", "Compaction threshold", "float", minimum=0.01, maximum=1.0,
            help="Compact when the context passes this share of the window"),
    Setting("compaction", "Compaction mode", "choice", ("ctxlens", "naive", "none"),
            help="ctxlens: goal/snip/micro/summary layers; naive: keep the newest messages; "
            "none: never compact"),
    Setting("injection_interval", "Injection interval", "int", minimum=1, maximum=10_000,
            help="Rounds between two injections of the current context (time, goals, focus)"),
    Setting("skill_recency_threshold", "Skill recency window", "int", minimum=0,
            maximum=100_000, help="Messages after which a skill left the context is injected "
            "again"),
    Setting("goal_mode", "Goal mode", "choice", GOAL_MODES,
            help="When goal compaction runs: never, as each goal completes, or on overflow"),
)  # fmt: skip
ON_DIVERGE = ("auto", "stop", "live")
ON_DIVERGE_HELP = {
    "auto": "go on with the trace's offline model when it has one (demo traces), else stop",
    "stop": "stop at the first call whose recorded reply no longer makes sense",
    "live": "let the offline model answer from the divergence on (demo traces only)",
}


def defaults(metadata: Any) -> dict[str, Any]:
    """The source's values of ``RERUN_SETTINGS`` (ctxlens's defaults for an imported trace)."""
    raw = metadata.get("run_config") if isinstance(metadata, dict) else None
    config = RunConfig.from_json(raw) if isinstance(raw, dict) else RunConfig()
    return {s.key: getattr(config, s.key) for s in RERUN_SETTINGS}


def settings_pairs(
    base: dict[str, Any], chosen: dict[str, Any], extra: str = ""
) -> tuple[str, ...]:
    """``key=value`` pairs for what differs from ``base``, then the ``extra`` pairs
    (whitespace-separated, shell quoting allowed); refused when one is not a setting."""
    pairs = [f"{k}={_value(v)}" for k, v in chosen.items() if not _same(v, base.get(k))]
    try:
        words = shlex.split(extra)
    except ValueError as exc:
        raise InvalidInputError(f"more settings: {exc}") from None
    for word in words:
        key = word.partition("=")[0].strip().replace("-", "_")
        pairs = [p for p in pairs if p.partition("=")[0] != key]
        pairs.append(word)
    RunConfig().with_settings(pairs)  # raises InvalidInputError naming a bad pair
    return tuple(pairs)


def _value(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, float):
        return f"{round(v, 6):g}"
    return json.dumps(v)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) < 1e-9
    return bool(a == b)


@dataclass(frozen=True, slots=True)
class StartCall:
    position: int
    label: str


def start_calls(reader: Reader, trace_id: str) -> list[StartCall]:
    """The calls a re-run can start from: the main agent's calls of the current run."""
    calls = trace_calls(reader, trace_id)
    out = [StartCall(0, "call 0 — from the start (a fresh turn with the first user message)")]
    for c in main_calls(live_calls(reader, trace_id, calls)):
        if c.position == 0:
            continue
        tokens = (
            f" · {c.input_tokens:,} tokens in ({c.input_basis})"
            if c.input_tokens is not None
            else ""
        )
        head = f" · head #{c.head}" if c.head is not None else ""
        out.append(StartCall(c.position, f"call {c.position}{head}{tokens}"))
    return out


def command_line(trace_id: str, opts: ReplayOptions) -> str:
    """The same re-run as a ``ctxlens replay`` command (shown in the dialog)."""
    words = ["ctxlens", "replay", trace_id]
    if opts.from_call:
        words += ["--from-call", str(opts.from_call)]
    for pair in opts.settings:
        words += ["--set", pair]
    if opts.on_diverge != "auto":
        words += ["--on-diverge", opts.on_diverge]
    return " ".join(shlex.quote(w) for w in words)


@dataclass(frozen=True, slots=True)
class RerunProgress:
    calls: int
    """Model calls answered so far (every agent)."""
    expected: int
    """Calls the source made from the start call on (the replay may make more or fewer)."""
    compactions: int


@dataclass(frozen=True)
class RerunOutcome:
    source: str
    trace_id: str | None
    """The new trace (also when cancelled: what was written so far)."""
    result: ReplayResult | None
    """``None`` when cancelled."""
    progress: RerunProgress

    @property
    def cancelled(self) -> bool:
        return self.result is None

    def headline(self) -> str:
        p = self.progress
        if self.result is None:
            where = f" (partial trace {self.trace_id})" if self.trace_id else ""
            return f"Cancelled after {p.calls:,} calls{where}."
        r = self.result
        diverged = (
            f"; diverged at call {r.diverged.call_index} ({r.diverged.reason})"
            if r.diverged is not None
            else ""
        )
        if r.diverged is not None and r.continued_with is not None:
            diverged += f", then {r.continued_with} answered"
        return (
            f"Replayed into {r.trace_id}: {r.calls:,} calls, {r.compactions:,} compactions, "
            f"{input_tokens_text(r)}, stopped: {r.stopped}{diverged}."
        )


def input_tokens_text(r: ReplayResult) -> str:
    """The replay's input tokens as the comparison's two rows give them: ``492,176 input
    tokens over all calls (recorded), 488,598 in the 123 main-agent calls (recorded)``."""
    every = counts_text(r.input_basis_all_calls)
    main = counts_text(r.input_basis)
    return (
        f"{r.input_tokens_all_calls:,} input tokens over all calls"
        + (f" ({every})" if every else "")
        + f", {r.input_tokens:,} in the {counted(r.main_calls, 'main-agent call')}"
        + (f" ({main})" if main else "")
    )


def run_rerun(
    store: Store,
    trace_id: str,
    opts: ReplayOptions,
    cancel: threading.Event | None = None,
    report: Callable[[RerunProgress], None] | None = None,
) -> RerunOutcome:
    """Re-run ``trace_id`` (blocking: its own event loop)."""
    return asyncio.run(_rerun(store, trace_id, opts, cancel or threading.Event(), report))


async def _rerun(
    store: Store,
    trace_id: str,
    opts: ReplayOptions,
    cancel: threading.Event,
    report: Callable[[RerunProgress], None] | None,
) -> RerunOutcome:
    with store.read() as r:
        source = r.find_trace(trace_id).id
        expected = max(0, len(trace_calls(r, source)) - opts.from_call)
    before = {t.id for t in store.traces()}
    counts = {"calls": 0, "compactions": 0}
    written: list[str] = []

    def on_event(ev: RunEvent) -> None:
        if not written:
            written.append(ev.trace_id)
        if ev.type == "usage":
            counts["calls"] += 1
        elif ev.type == "compaction" and "level" in ev.data:
            counts["compactions"] += 1
        else:
            return
        if report is not None:
            report(RerunProgress(counts["calls"], expected, counts["compactions"]))

    bus = EventBus()
    bus.subscribe(on_event)
    run = asyncio.ensure_future(replay_async(store, source, opts, events=bus))
    watch = asyncio.ensure_future(_wait_for(cancel))
    await asyncio.wait({run, watch}, return_when=asyncio.FIRST_COMPLETED)
    watch.cancel()
    progress = RerunProgress(counts["calls"], expected, counts["compactions"])
    if not run.done():
        run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
        new = written[0] if written else next(iter({t.id for t in store.traces()} - before), None)
        return RerunOutcome(source, new, None, progress)
    result = run.result()
    return RerunOutcome(source, result.trace_id, result, progress)


async def _wait_for(event: threading.Event) -> None:
    while not event.is_set():  # noqa: ASYNC110 (a thread's event: polled, no thread parked)
        await asyncio.sleep(0.05)
