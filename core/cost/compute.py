"""Pricing calls and summing them: per call, trace, agent (subagents), goal and model.

A call is priced when its model has a row and its usage records token counts; a call that
reports cache reads or writes its model has no price for is unpriced rather than guessed.
``saved_usd`` is what the cache reads saved: the same tokens at the input price, minus what
they cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.cost.table import Price, PriceTable
from core.cost.usage import TokenUsage, token_usage

MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class CallUsage:
    """What pricing needs of a recorded call (``llm_calls`` without the context)."""

    trace_id: str
    call_index: int
    model: str
    usage: Any
    agent_name: str
    head_sequence: int | None


@dataclass(frozen=True, slots=True)
class CallCost:
    usd: float | None
    """``None``: no price (see ``reason``)."""
    saved_usd: float = 0.0
    reason: str = ""
    """Why a call has no price: ``no price for MODEL``, ``no usage recorded``, …"""
    price_date: str = ""
    """The date of the price-table row that priced it (``""``: unpriced, or a price given
    as an override without a date)."""

    def to_json(self) -> dict[str, Any]:
        usd = None if self.usd is None else round(self.usd, 6)
        return {
            "usd": usd,
            "saved_usd": round(self.saved_usd, 6),
            "reason": self.reason,
            "price_date": self.price_date,
        }


@dataclass
class CostSummary:
    """Sums over a set of calls; ``usd`` covers the priced calls only."""

    table_date: str
    usd: float = 0.0
    saved_usd: float = 0.0
    priced_calls: int = 0
    unpriced_calls: int = 0
    unpriced_models: set[str] = field(default_factory=set)
    by_agent: dict[str, float] = field(default_factory=dict)
    by_goal: dict[str, float] = field(default_factory=dict)
    by_model: dict[str, float] = field(default_factory=dict)
    price_dates: dict[str, str] = field(default_factory=dict)
    """Model → the date of the table row that priced its calls (``override``: a price given
    without a date). ``table_date`` is the table's; a row can be newer than another."""

    def add(self, model: str, cost: CallCost, agent: str, goal: str | None, calls: int = 1) -> None:
        """One call's cost, or the summed cost of ``calls`` calls alike in model and shape."""
        if cost.usd is None:
            self.unpriced_calls += calls
            self.unpriced_models.add(model or "(none)")
            return
        self.priced_calls += calls
        self.price_dates[model] = cost.price_date or "override"
        self.usd += cost.usd
        self.saved_usd += cost.saved_usd
        for bucket, key in ((self.by_agent, agent), (self.by_model, model), (self.by_goal, goal)):
            if key:
                bucket[key] = bucket.get(key, 0.0) + cost.usd

    @property
    def complete(self) -> bool:
        """Whether ``usd`` is the whole cost: some call is priced and none is unpriced."""
        return self.priced_calls > 0 and self.unpriced_calls == 0

    def to_json(self) -> dict[str, Any]:
        """The contract shape ``{usd, priced_calls, unpriced_calls, table_date}`` and more;
        ``cost_complete`` false says ``usd`` is a lower bound (or absent), ``text`` says it."""
        calls = self.priced_calls + self.unpriced_calls
        return {
            "usd": round(self.usd, 6) if self.priced_calls else None,
            "priced_calls": self.priced_calls,
            "unpriced_calls": self.unpriced_calls,
            "calls": calls,
            "cost_complete": self.complete,
            "text": format_cost(self.usd if self.priced_calls else None, self.priced_calls, calls),
            "table_date": self.table_date,
            "saved_usd": round(self.saved_usd, 6),
            "unpriced_models": sorted(self.unpriced_models),
            "by_agent": _rounded(self.by_agent),
            "by_goal": _rounded(self.by_goal),
            "by_model": _rounded(self.by_model),
            "price_dates": dict(sorted(self.price_dates.items())),
        }

    def dates_text(self) -> str:
        """Which prices it used: ``claude-opus-4-6 of 2026-02-05, gpt-4o of 2024-10-01``."""
        return ", ".join(f"{m} of {d}" for m, d in sorted(self.price_dates.items()))


def call_cost(price: Price | None, usage: Any, model: str = "") -> CallCost:
    return counts_cost(price, token_usage(usage), model)


def counts_cost(price: Price | None, counts: TokenUsage | None, model: str = "") -> CallCost:
    """``call_cost`` for usage already read (``core/cost/usage.py:token_usage``)."""
    if price is None:
        return CallCost(None, reason=f"no price for {model or 'an unnamed model'}")
    if counts is None:
        return CallCost(None, reason="no usage recorded")
    return _priced(price, counts)


def summarize(
    calls: Iterable[Any], table: PriceTable, goal_of: Callable[[Any], str | None] | None = None
) -> CostSummary:
    """Sum ``LlmCall``-like records (``model``, ``usage``, ``agent_name``)."""
    out = CostSummary(table.table_date)
    for call in calls:
        cost = call_cost(table.lookup(call.model), call.usage, call.model)
        out.add(call.model, cost, call.agent_name, goal_of(call) if goal_of else None)
    return out


def price_call(call: CallUsage, table: PriceTable) -> CallCost:
    return call_cost(table.lookup(call.model), call.usage, call.model)


def costs_by_trace(calls: Iterable[CallUsage], table: PriceTable) -> dict[str, CostSummary]:
    """Trace id → its cost, for every trace among ``calls``."""
    return totals_by_trace(calls, table)[0]


def totals_by_trace(
    calls: Iterable[CallUsage], table: PriceTable, wanted: set[str] | None = None
) -> tuple[dict[str, CostSummary], dict[str, int]]:
    """Per trace (of ``wanted``, default all): its cost, and its recorded tokens (prompt +
    completion). One price lookup per model and one usage read per call."""
    prices: dict[str, Price | None] = {}
    costs: dict[str, CostSummary] = {}
    tokens: dict[str, int] = {}
    for call in calls:
        if wanted is not None and call.trace_id not in wanted:
            continue
        if call.model not in prices:
            prices[call.model] = table.lookup(call.model)
        counts = token_usage(call.usage)
        summary = costs.setdefault(call.trace_id, CostSummary(table.table_date))
        summary.add(call.model, counts_cost(prices[call.model], counts, call.model),
                    call.agent_name, None)  # fmt: skip
        if counts:
            tokens[call.trace_id] = tokens.get(call.trace_id, 0) + counts.prompt + counts.completion
    return costs, tokens


def usd_by_trace(
    costs: dict[str, CostSummary], tokens: dict[str, int] | None = None
) -> dict[str, tuple[Any, ...]]:
    """Trace id → (USD of its priced calls, ``None`` where no call has a price; how many
    calls are priced), so a list can tell a whole cost from a lower bound; with the
    recorded ``tokens`` of ``trace_totals`` also (its recorded tokens, ``None`` where no
    call recorded usage; the dates of the price rows used)."""
    if tokens is None:
        return {
            tid: (c.usd if c.priced_calls else None, c.priced_calls) for tid, c in costs.items()
        }
    return {
        tid: (
            c.usd if c.priced_calls else None,
            c.priced_calls,
            tokens.get(tid),
            tuple(sorted(c.price_dates.items())),
        )
        for tid, c in costs.items()
    }


def format_usd(usd: float | None) -> str:
    """A cost for people: ``no price``, ``$12.34``, ``$0.0012``, ``<$0.0001`` (a tiny cost is
    not shown as ``$0.0000``)."""
    if usd is None:
        return "no price"
    if usd >= 0.01:
        return f"${usd:,.2f}"
    if usd >= 0.0001:
        return f"${usd:.4f}"
    return "<$0.0001" if usd > 0 else "$0"


def format_cost(usd: float | None, priced: int, calls: int) -> str:
    """``format_usd`` of what ``priced`` of ``calls`` calls cost; when some are unpriced
    the sum is a lower bound and says so: ``≥ $0.17 (3 of 156 calls priced)``."""
    if usd is None or priced >= calls:
        return format_usd(usd)
    return f"≥ {format_usd(usd)} ({priced:,} of {calls:,} calls priced)"


RECORDED_COST = "recorded_cost"
"""Trace metadata key: ``{usd, calls, source}``, the cost the tool itself recorded (SWE-agent
``model_stats.total_cost``, OTel ``gen_ai.usage.*_cost``), shown beside ctxlens's pricing."""


def recorded_cost(metadata: Any) -> tuple[float, str] | None:
    """``(USD, who recorded it)`` when the trace's tool recorded what the run cost."""
    rec = metadata.get(RECORDED_COST) if isinstance(metadata, dict) else None
    if not isinstance(rec, dict):
        return None
    usd = rec.get("usd")
    if not isinstance(usd, (int, float)) or isinstance(usd, bool):
        return None
    return float(usd), str(rec.get("source") or "the tool")


def recorded_cost_text(metadata: Any) -> str:
    """``SWE-agent recorded $1.27`` when the trace's tool recorded its cost, else ``""``
    (``format_recorded_usd``: a small recorded cost keeps its digits)."""
    rec = recorded_cost(metadata)
    return "" if rec is None else f"{rec[1]} recorded {format_recorded_usd(rec[0])}"


def recorded_cost_short(metadata: Any) -> str:
    """``$1.27 recorded by SWE-agent``: the figure first, where a line may be cut."""
    rec = recorded_cost(metadata)
    return "" if rec is None else f"{format_recorded_usd(rec[0])} recorded by {rec[1]}"


def format_recorded_usd(usd: float) -> str:
    """A cost the tool recorded, as it recorded it to three significant digits: ``$1.27``,
    ``$0.000125`` (``format_usd`` would write ``$0.0001``, a fifth less than recorded)."""
    if usd >= 0.01 or usd <= 0:
        return format_usd(usd)
    digits = 2 - math.floor(math.log10(usd))
    return f"${usd:.{digits}f}".rstrip("0")


def parse_usage(raw: str | None) -> Any:
    """A usage column's JSON text (orjson; ``json`` for the NaN only it writes)."""
    if raw is None or raw == "null":
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def _priced(p: Price, u: TokenUsage) -> CallCost:
    if u.cached and p.cache_read is None:
        return CallCost(None, reason=f"no cache-read price for {p.model}")
    if u.cache_creation and p.cache_write is None:
        return CallCost(None, reason=f"no cache-write price for {p.model}")
    read = p.cache_read or 0.0
    usd = (
        u.uncached_input * p.input
        + u.cached * read
        + u.cache_creation * (p.cache_write or 0.0)
        + u.completion * p.output
    ) / MILLION
    return CallCost(usd, saved_usd=u.cached * (p.input - read) / MILLION, price_date=p.date)


def _rounded(d: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in sorted(d.items())}
