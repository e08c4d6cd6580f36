"""Summarizer fault matrix and the guards of automatic compaction (CMP-4..6).

The context here can only shrink through the summary (long assistant turns, no tool
results, fewer messages than snip's limit), so each faulty summarizer is the only way out
and every attempt is a failure: the context is never replaced by a bad summary, the
breaker opens after three, and fourteen automatic attempts never turn into a loop.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.histories import History
from core.context.compaction import (
    Budget,
    CircuitBreaker,
    CompactionConfig,
    Compactor,
    MicroParams,
    ScriptedSummarizer,
    SummaryParams,
    SummaryRequest,
    record_outcome,
)
from core.context.compaction.items import total_tokens
from core.context.view import View
from core.errors import InvalidInputError

LONG = "We examined the data and moved on to the next question. " * 30


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Faulty:
    """A summarizer with a scripted answer (or exception); counts its calls."""

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.calls = 0

    async def summarize(self, request: SummaryRequest) -> str:
        self.calls += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.answer == "<input>":  # larger than what it summarizes
            return "\n".join(str(m.get("content")) for m in request.messages) * 2
        return self.answer


def context() -> View:
    h = History()
    h.system()
    h.user("Study the dataset and report.")
    for k in range(14):
        h.assistant(f"Turn {k}. " + LONG)
        h.user("continue")
    return h.view()


def config(**kw: object) -> CompactionConfig:
    return CompactionConfig(window=2000, **kw)  # type: ignore[arg-type]


FAULTS = {
    "raises": RuntimeError("connection reset by peer"),
    "empty": "   \n",
    "provider_error": "Error 429: rate limit exceeded, retry later",
    "provider_json": '{"error": {"type": "overloaded_error", "message": "Overloaded"}}',
    "over_budget": "word " * 3000,
    "larger_than_input": "<input>",
}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_bad_summary_is_never_committed_and_opens_the_breaker(fault: str) -> None:
    view = context()
    model = Faulty(FAULTS[fault])
    cfg = (
        config(summary=SummaryParams(max_narrative_tokens=100_000))
        if fault == ("larger_than_input")
        else config()
    )
    clock = Clock()
    compactor = Compactor(cfg, model, clock=clock)
    outcomes = [asyncio.run(compactor.maybe_compact(view)) for _ in range(14)]
    assert [o.status for o in outcomes] == ["failed"] * 3 + ["skipped"] * 11
    assert model.calls == 3, "no loop: the open breaker stops further attempts"
    assert all(o.items == view.items and not o.compacted for o in outcomes)
    assert compactor.breaker.state == "open"
    assert all(o.reason == "circuit breaker open" for o in outcomes[3:])
    assert outcomes[0].errors and outcomes[0].errors[0].startswith("summary: ")
    with pytest.raises(InvalidInputError):
        record_outcome(None, "t", outcomes[0])  # type: ignore[arg-type]


def test_fault_reasons_name_the_fault() -> None:
    view = context()
    reasons = {}
    for name, answer in FAULTS.items():
        cfg = (
            config(summary=SummaryParams(max_narrative_tokens=100_000))
            if name == ("larger_than_input")
            else config()
        )
        out = asyncio.run(Compactor(cfg, Faulty(answer)).maybe_compact(view))
        reasons[name] = out.reason
    assert "summarizer raised RuntimeError('connection reset by peer')" in reasons["raises"]
    assert "empty summary" in reasons["empty"]
    assert "provider error text" in reasons["provider_error"]
    assert "provider error text" in reasons["provider_json"]
    assert "over budget" in reasons["over_budget"]
    assert "not smaller than what it replaces" in reasons["larger_than_input"]


def test_half_open_after_300_s_then_success_closes() -> None:
    view = context()
    clock = Clock()
    bad = Faulty(RuntimeError("boom"))
    compactor = Compactor(config(), bad, clock=clock)
    for _ in range(3):
        asyncio.run(compactor.maybe_compact(view))
    clock.now += 299
    assert asyncio.run(compactor.maybe_compact(view)).status == "skipped"
    clock.now += 1
    assert compactor.breaker.state == "half_open"
    assert asyncio.run(compactor.maybe_compact(view)).status == "failed"
    assert compactor.breaker.state == "open" and bad.calls == 4, "one trial, then open again"
    clock.now += 300
    compactor.summarizer = ScriptedSummarizer()
    out = asyncio.run(compactor.maybe_compact(view))
    assert out.compacted and out.tokens_after < out.tokens_before
    assert compactor.breaker.state == "closed" and compactor.breaker.failures == 0


def test_manual_compaction_bypasses_and_resets_the_breaker() -> None:
    view = context()
    compactor = Compactor(config(), Faulty(RuntimeError("boom")), clock=Clock())
    for _ in range(3):
        asyncio.run(compactor.maybe_compact(view))
    assert compactor.breaker.state == "open"
    compactor.summarizer = ScriptedSummarizer()
    dry = asyncio.run(compactor.compact(view, "summary", dry_run=True))
    assert dry.compacted and compactor.breaker.state == "open", "a preview changes nothing"
    out = asyncio.run(compactor.compact(view, "summary"))
    assert out.compacted and out.trigger == "manual"
    assert compactor.breaker.state == "closed"


def test_recursion_guard() -> None:
    view = context()
    inner: list[str] = []

    class Reentrant:
        async def summarize(self, request: SummaryRequest) -> str:
            nested = await compactor.maybe_compact(view)
            inner.append(nested.status + ": " + nested.reason)
            return "narrative"

    compactor = Compactor(config(), Reentrant())
    out = asyncio.run(compactor.maybe_compact(view))
    assert inner == ["skipped: a compaction is already running"]
    assert out.compacted


def test_under_the_threshold_nothing_runs() -> None:
    view = context()
    model = Faulty("never called")
    out = asyncio.run(Compactor(config(), model).maybe_compact(view, Budget(window=10**6)))
    assert out.status == "not_needed" and model.calls == 0
    reported = Budget(window=2000, tokens=900)  # provider usage beats the local count
    assert asyncio.run(Compactor(config(), model).maybe_compact(view, reported)).status == (
        "not_needed"
    )


def test_a_compaction_reclaiming_under_ten_percent_is_refused() -> None:
    h = History()
    h.system()
    h.user("task " + LONG * 3)
    for k in range(12):
        h.calls([("read_file", {"path": f"/f{k}"}, f"short result number {k} " * 3)])
    view = h.view()
    cfg = CompactionConfig(
        window=200,
        micro=MicroParams(keep_recent=1, step=1),
        aggressive=MicroParams(keep_recent=0, step=1),
        goal_mode="none",
    )
    compactor = Compactor(cfg, None, clock=Clock())
    out = asyncio.run(compactor.maybe_compact(view))
    saved = (out.tokens_before - total_tokens(out.layers[-1].items, view.messages)) / (
        out.tokens_before
    )
    assert 0 < saved < 0.10
    assert out.status == "refused" and out.items == view.items
    assert compactor.breaker.failures == 1
    rest = [asyncio.run(compactor.maybe_compact(view)).status for _ in range(13)]
    assert rest == ["refused"] * 2 + ["skipped"] * 11, "no progress 14 times: no loop"
    manual = asyncio.run(compactor.compact(view, "micro"))
    assert manual.compacted, "a manual compaction is not refused for a small gain"


def test_breaker_unit() -> None:
    clock = Clock()
    b = CircuitBreaker(3, 300, clock)
    b.record_failure()
    b.record_failure()
    b.record_success()
    assert b.failures == 0 and b.allow()
    for _ in range(3):
        b.record_failure()
    assert not b.allow()
    clock.now += 300
    assert b.allow() and b.state == "half_open"
    b.reset()
    assert b.state == "closed"


def test_no_summarizer_is_a_failure_not_a_crash() -> None:
    view = context()
    out = asyncio.run(Compactor(config(), None).maybe_compact(view))
    assert out.status == "failed" and out.reason.startswith("summary: no summarizer configured;")
    assert "snip: at most 50 messages" in out.reason, "each layer says why it did nothing"
