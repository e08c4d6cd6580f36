"""One row per trace for the trace list (``ctxlens traces``, the Traces pane): what it was,
which model, when it started, how long it ran, how many model calls, how many tokens.

Each figure is recorded or unknown (``None``), never guessed: the start and duration of an
imported trace are the span its source dated (``metadata.recorded_span``, written by
``core/importers/base.py:TraceBuilder``); a trace whose source dates nothing has no
duration. Native runs date every message as it is written, so their span is the
messages'. ``tokens`` is the stored transcript's tokens (all branches, counted by ctxlens),
not billed usage. Three grouped queries for the whole store, whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from core.importers.usage import RecordedTotals, recorded_totals
from core.inspector.recorded_time import Basis, basis_of
from core.trace_record import Trace

if TYPE_CHECKING:
    from core.store.reader import Reader


Calls = dict[str, tuple[int, str | None]]
"""Trace id → (model calls, a model they name)."""
Spans = dict[str, tuple[float, float, int]]
"""Trace id → (first and last message time, transcript tokens)."""


@cache
def imported_sources() -> frozenset[str]:
    """Sources whose message times are the import's clock unless the source gave them."""
    from core.importers.formats import FORMATS

    return frozenset(FORMATS) - {"ctxlens"}


@dataclass(frozen=True)
class TraceSummary:
    trace: Trace
    model: str | None
    start: float
    duration: float | None
    calls: int
    tokens: int
    usd: float | None = None
    """What its priced calls cost (``core/cost``); ``None``: no call has a price."""
    priced_calls: int = 0
    """How many of its ``calls`` have a price: fewer, and ``usd`` is a lower bound."""
    dated: bool = True
    """``start`` is a recorded time; ``False``: the file dated nothing (a SWE-agent
    trajectory, a list of chat messages) and ``start`` is when it was imported."""
    recorded_tokens: int | None = None
    """Prompt and completion tokens its calls' usage recorded, summed over the calls (a
    prompt sent again at every call counts every time: a session of 177k transcript tokens
    can record 15M); ``None``: no call recorded usage (or it was not read)."""
    price_dates: tuple[tuple[str, str], ...] = ()
    """(model, date of the price-table row that priced its calls)."""

    @property
    def cost_complete(self) -> bool:
        return self.usd is not None and self.priced_calls >= self.calls

    @property
    def eval(self) -> dict[str, Any] | None:
        """The Inspect eval a sample trace belongs to (``None`` for other traces)."""
        meta = self.trace.metadata
        ev = meta.get("eval") if isinstance(meta, dict) else None
        return ev if isinstance(ev, dict) else None

    @property
    def sample(self) -> dict[str, Any] | None:
        meta = self.trace.metadata
        s = meta.get("sample") if isinstance(meta, dict) else None
        return s if isinstance(s, dict) else None

    @property
    def time_basis(self) -> Basis:
        """How its times were read where the file wrote them without a zone
        (``metadata.time_basis``, ``core/importers/times.py``); ``None``: they carried it."""
        return basis_of(self.trace.metadata)

    @property
    def recorded_totals(self) -> RecordedTotals | None:
        """The run's totals the tool recorded (SWE-agent's ``model_stats``), if any."""
        return recorded_totals(self.trace.metadata)

    def to_json(self) -> dict[str, Any]:
        """The ``ctxlens traces --json`` row (the first six keys are the contract)."""
        tr = self.trace
        out: dict[str, Any] = {
            "id": tr.id,
            "title": tr.title,
            "source": tr.source,
            "created_at": tr.created_at,
            "messages": tr.messages,
            "head": tr.head,
            "model": self.model,
            "start": self.start,
            "duration": self.duration,
            "calls": self.calls,
            "tokens": self.tokens,
            "start_recorded": self.dated,
            # the run's usage as the tool recorded it, where it records no call's own
            "recorded_totals": totals.to_json() if (totals := self.recorded_totals) else None,
            "recorded_tokens": self.recorded_tokens,
            # how times written without a zone were read (offset_minutes null: not found,
            # read as UTC); null where they carried their zone
            "time_basis": self.time_basis,
        }
        if self.eval is not None:
            out["eval"] = self.eval
        if self.sample is not None:
            out["sample"] = self.sample
        return out


class TraceCost(NamedTuple):
    """What a trace's recorded usage says, priced (``core/cost/totals.py:usd_by_trace``)."""

    usd: float | None
    priced_calls: int
    recorded_tokens: int | None = None
    price_dates: tuple[tuple[str, str], ...] = ()


Costs = Mapping[str, tuple[Any, ...]]
"""Trace id → (USD of its priced calls, how many calls are priced[, recorded tokens, the
dates of the prices used])."""


def summaries(r: Reader, costs: Costs | None = None) -> list[TraceSummary]:
    """Every trace of the store with its figures, in the store's order (oldest first)."""
    return assemble(r.traces(), _calls(r), _messages(r), costs)


def assemble(
    traces: Iterable[Trace],
    calls: Calls,
    messages: Spans,
    costs: Costs | None = None,
) -> list[TraceSummary]:
    """The rows from the three grouped query results (``summaries``, or the sqlite3-only
    path of ``core/store/quick.py:figures_and_calls``); ``costs``: ``Costs``."""
    costs = costs or {}
    out = []
    for tr in traces:
        n_calls, call_model = calls.get(tr.id, (0, None))
        first, last, tokens = messages.get(tr.id, (None, None, 0))
        start, duration, dated = _span(tr, first, last)
        cost = TraceCost(*costs.get(tr.id, (None, 0)))
        out.append(
            TraceSummary(
                tr,
                call_model or _meta_model(tr.metadata),
                start,
                duration,
                n_calls,
                tokens,
                cost.usd,
                cost.priced_calls,
                dated,
                cost.recorded_tokens,
                cost.price_dates,
            )
        )
    return out


def _calls(r: Reader) -> Calls:
    from sqlalchemy import func, select

    from core.store import schema as t
    from core.store.quick import calls_and_model

    c = t.llm_calls.c
    keys = (c.trace_id, c.branch_type, c.model)
    return calls_and_model(r.conn.execute(select(*keys, func.count()).group_by(*keys)))


def _messages(r: Reader) -> Spans:
    from sqlalchemy import case, func, select

    from core.store import schema as t

    m = t.messages.c
    counted = func.sum(case((m.token_count > 0, m.token_count), else_=0))
    q = select(m.trace_id, func.min(m.created_at), func.max(m.created_at), counted).group_by(
        m.trace_id
    )
    return {tid: (lo, hi, int(n or 0)) for tid, lo, hi, n in r.conn.execute(q)}


def _span(tr: Trace, first: float | None, last: float | None) -> tuple[float, float | None, bool]:
    """``(start, duration, dated)``: the span the file recorded, a run's message times, or
    (an import that dated nothing) the import time, marked undated."""
    meta = tr.metadata if isinstance(tr.metadata, dict) else {}
    span = meta.get("recorded_span")
    if isinstance(span, dict) and isinstance(span.get("start"), int | float):
        start, end = float(span["start"]), float(span.get("end") or span["start"])
        return start, (end - start) if end > start else None, True
    if tr.source in imported_sources():
        return tr.created_at, None, False
    if first is None or last is None:
        return tr.created_at, None, True
    return first, last - first, True


def _meta_model(meta: Any) -> str | None:
    if not isinstance(meta, dict):
        return None
    for holder in (meta, meta.get("eval"), meta.get("session_meta"), meta.get("info")):
        if isinstance(holder, dict) and isinstance(holder.get("model"), str) and holder["model"]:
            return str(holder["model"])
    return None


@dataclass(frozen=True)
class EvalGroup:
    """The samples of one Inspect eval, under one row of the trace list."""

    key: str
    header: dict[str, Any]
    samples: tuple[TraceSummary, ...]

    @property
    def start(self) -> float:
        return min(s.start for s in self.samples)

    @property
    def samples_text(self) -> str:
        """``1 sample``, ``N samples``."""
        n = len(self.samples)
        return f"{n} sample" if n == 1 else f"{n} samples"

    @property
    def label(self) -> str:
        """``task · model · status · metric value, … · N samples``."""
        h = self.header
        metrics = [
            f"{name} {_number(value)}"
            for score in h.get("scores") or []
            for name, value in (score.get("metrics") or {}).items()
        ]
        parts = [h.get("task"), h.get("model"), h.get("status"), ", ".join(metrics)]
        parts.append(self.samples_text)
        return " · ".join(str(p) for p in parts if p)


def group_evals(rows: list[TraceSummary]) -> list[TraceSummary | EvalGroup]:
    """Traces with the samples of each eval gathered into one group (at its first sample)."""
    groups: dict[str, list[TraceSummary]] = {}
    out: list[TraceSummary | EvalGroup | str] = []
    for s in rows:
        ev = s.eval
        if ev is None:
            out.append(s)
            continue
        key = str(ev.get("key") or ev.get("file") or "")
        if key not in groups:
            groups[key] = []
            out.append(key)
        groups[key].append(s)
    return [
        EvalGroup(x, groups[x][0].eval or {}, tuple(groups[x])) if isinstance(x, str) else x
        for x in out
    ]


def _number(value: Any) -> str:
    return f"{value:.3g}" if isinstance(value, float) else str(value)
