"""Comparing two traces call by call (a run and its replay under other settings).

Calls are aligned by the main agent's answered calls: the k-th call of one against the
k-th of the other. For each pair: input tokens of both, whether the model saw the same
context (the rendered requests equal, ref ids mapped when the traces name refs
differently) and how many messages only one of them had. Per trace: compactions (level,
layers, before which call), the retention report at the end (which completed steps, refs,
constraints and skills from the whole history the last call still saw) and the summary
metrics of ``core/run/metrics.py:compute`` over each trace's lossless export. Everything
is JSON-serializable (``Comparison.to_json``); ``context_pair`` gives the contexts of one pair
for a side-by-side view.

Every figure counts each trace's current path (``core/replay/calls.py:live_calls``,
``compute(current_path=True)``): the calls, tool calls and compactions on branches a rewind
abandoned are left out, and only their number is said (``Side.abandoned_calls``). Input
tokens are summed twice: over the main agent's calls (the calls compared one by one) and
over all calls (subagents too, ``input_tokens_all_calls``).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.context.compaction import load_records, retention_report
from core.context.compaction.summary_state import main_path_messages
from core.context.view import View, current_items, render_item, resolve, token_breakdown
from core.cost.stored import trace_cost
from core.cost.table import load_table
from core.exporters.ctxlens_json import export_text
from core.fields_json import fields_json
from core.records import ContextItem, Message
from core.replay.calls import CallRef, InputBasis, live_calls, main_calls, trace_calls
from core.replay.refmap import RefRenamer, scope_of
from core.run.metrics import compute, current_sequences
from core.store import Store
from core.store.reader import Reader

SETTINGS_SHOWN = (
    "window",
    "threshold",
    "compaction",
    "goal_mode",
    "snip_max_messages",
    "micro_keep_recent",
    "injection_interval",
    "inject_skills",
    "skill_recency_threshold",
    "soft_limit",
    "hard_limit",
    "max_steps",
)


@dataclass(frozen=True, slots=True)
class CompactionMark:
    level: str
    trigger: str
    layers: tuple[str, ...]
    at_sequence: int | None
    before_call: int | None
    """The first main call (k, 0-based) that saw the compacted context."""
    tokens_before: int
    tokens_after: int
    removed: int

    def to_json(self) -> dict[str, Any]:
        return {**fields_json(self), "layers": list(self.layers)}


@dataclass(frozen=True)
class Side:
    trace_id: str
    title: str
    source: str
    settings: dict[str, Any]
    metrics: dict[str, Any]
    input_tokens: tuple[int, ...]
    """Input tokens of each main call, in order (where each comes from: ``input_basis``)."""
    output_tokens: tuple[int | None, ...]
    call_indexes: tuple[int | None, ...]
    compactions: tuple[CompactionMark, ...]
    retention: dict[str, Any]
    replay_of: dict[str, Any] | None = None
    cost: dict[str, Any] = field(default_factory=dict)
    """``core/cost/compute.py:CostSummary.to_json`` of the whole trace."""
    input_basis: tuple[InputBasis, ...] = ()
    """Per main call, where ``input_tokens`` comes from (``CallRef.input_basis``): the
    model's recorded usage, or ctxlens's count (of the request its run sent, else of the
    context)."""
    all_input_tokens: tuple[int, ...] = ()
    """Input tokens of every answered call of the current path (main agent, subagents,
    side branches), in order, measured as ``input_tokens``."""
    all_input_basis: tuple[InputBasis, ...] = ()
    abandoned_calls: int = 0
    """Recorded calls on branches a rewind abandoned (counted in no figure)."""

    def to_json(self) -> dict[str, Any]:
        return {
            **fields_json(self, "trace_id", "title", "source", "settings", "replay_of", "metrics"),
            "input_tokens": list(self.input_tokens),
            "input_basis": list(self.input_basis),
            "input_tokens_all_calls": sum(self.all_input_tokens),
            "input_basis_all_calls": basis_counts(self.all_input_basis),
            "abandoned_calls": self.abandoned_calls,
            "output_tokens": list(self.output_tokens),
            "call_indexes": list(self.call_indexes),
            "compactions": [c.to_json() for c in self.compactions],
            **fields_json(self, "retention", "cost"),
        }


@dataclass(frozen=True, slots=True)
class CallPair:
    k: int
    a_call: int | None
    """A's ``llm_calls.call_index`` (``None``: A made no k-th call, or its call is derived
    from an assistant message, a trace without call records: ``in_a`` tells which)."""
    b_call: int | None
    a_tokens: int | None
    b_tokens: int | None
    same: bool
    only_a: int
    """Messages only A's context had (after mapping ref ids)."""
    only_b: int
    a_tokens_basis: InputBasis | None = None
    """Where ``a_tokens`` comes from (``CallRef.input_basis``; ``None``: no call)."""
    b_tokens_basis: InputBasis | None = None

    @property
    def in_a(self) -> bool:
        """A made a k-th main call (recorded or derived: every call has input tokens)."""
        return self.a_tokens is not None

    @property
    def in_b(self) -> bool:
        return self.b_tokens is not None

    def to_json(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.__slots__}


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    pairs: tuple[CallPair, ...]
    ref_names_mapped: int = 0
    """Ref ids of A renamed into B's names before comparing contexts."""
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def first_difference(self) -> int | None:
        return next((p.k for p in self.pairs if not p.same), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "summary": self.summary,
            "first_difference": self.first_difference,
            "ref_names_mapped": self.ref_names_mapped,
            "calls": [p.to_json() for p in self.pairs],
        }


def compare(store: Store, a: str, b: str) -> Comparison:
    """Compare traces ``a`` and ``b`` (ids or unique prefixes)."""
    with store.read() as r:
        ta, tb = r.find_trace(a), r.find_trace(b)
        renamer = _renamer(r, ta.id, ta.metadata, tb.id, tb.metadata)
        every_a, every_b = trace_calls(r, ta.id), trace_calls(r, tb.id)
        live_a, live_b = live_calls(r, ta.id, every_a), live_calls(r, tb.id, every_b)
        calls_a, calls_b = main_calls(live_a), main_calls(live_b)
        keys_a = [_keys(r, ta.id, c, renamer) for c in calls_a]
        keys_b = [_keys(r, tb.id, c, RefRenamer()) for c in calls_b]
        side_a = _side(store, r, ta, live_a, len(every_a))
        side_b = _side(store, r, tb, live_b, len(every_b))
    pairs = []
    for k in range(max(len(calls_a), len(calls_b))):
        ca = calls_a[k] if k < len(calls_a) else None
        cb = calls_b[k] if k < len(calls_b) else None
        ka = keys_a[k] if ca is not None else []
        kb = keys_b[k] if cb is not None else []
        only_a, only_b = _multiset_diff(ka, kb)
        pairs.append(
            CallPair(
                k,
                ca.call_index if ca else None,
                cb.call_index if cb else None,
                side_a.input_tokens[k] if ca else None,
                side_b.input_tokens[k] if cb else None,
                ca is not None and cb is not None and ka == kb,
                len(only_a),
                len(only_b),
                side_a.input_basis[k] if ca else None,
                side_b.input_basis[k] if cb else None,
            )
        )
    return Comparison(
        side_a, side_b, tuple(pairs), len(renamer.mapping), _summary(side_a, side_b, pairs)
    )


# -- contexts ------------------------------------------------------------------------------
def _renamer(r: Reader, a: str, meta_a: Any, b: str, meta_b: Any) -> RefRenamer:
    sa, sb = scope_of(a, meta_a), scope_of(b, meta_b)
    if sa == sb:
        return RefRenamer()
    return RefRenamer.between(r.refs(a), sb, sa)


def _context(r: Reader, trace_id: str, call: CallRef) -> View:
    items = call.context
    if items is None:
        items = current_items(r, trace_id, call.head)[0]
    return resolve(r, trace_id, items)


def _keys(r: Reader, trace_id: str, call: CallRef, renamer: RefRenamer) -> list[str]:
    """Each context message as a key: its rendered JSON, ref ids mapped."""
    view = _context(r, trace_id, call)
    keys = []
    for item in view.items:
        blob = json.dumps(render_item(item, view.messages), sort_keys=True, ensure_ascii=False)
        keys.append(hashlib.sha1(renamer(blob).encode()).hexdigest())
    return keys


def _multiset_diff(a: Sequence[str], b: Sequence[str]) -> tuple[list[str], list[str]]:
    ca, cb = Counter(a), Counter(b)
    return list((ca - cb).elements()), list((cb - ca).elements())


@dataclass(frozen=True)
class ContextPair:
    """What one pair of calls saw: each context, and which of its items only one side had
    (rows for a side-by-side view: ``core/inspector/comparison.py:context_diff``)."""

    k: int
    a: View
    b: View
    only_a: frozenset[int]
    """Indexes into ``a.items`` of messages B's context did not have."""
    only_b: frozenset[int]
    same: bool


def context_pair(store: Store, a: str, b: str, k: int) -> ContextPair:
    """The k-th main call of ``a`` and of ``b``, side by side."""
    with store.read() as r:
        ta, tb = r.find_trace(a), r.find_trace(b)
        renamer = _renamer(r, ta.id, ta.metadata, tb.id, tb.metadata)
        ca = main_calls(live_calls(r, ta.id, trace_calls(r, ta.id)))
        cb = main_calls(live_calls(r, tb.id, trace_calls(r, tb.id)))
        if not (0 <= k < len(ca) and 0 <= k < len(cb)):
            raise IndexError(f"call {k}: the traces have {len(ca)} and {len(cb)} main calls")
        va, vb = _context(r, ta.id, ca[k]), _context(r, tb.id, cb[k])
        ka = _keys(r, ta.id, ca[k], renamer)
        kb = _keys(r, tb.id, cb[k], RefRenamer())
    return ContextPair(k, va, vb, _only(ka, kb), _only(kb, ka), ka == kb)


def _only(mine: Sequence[str], theirs: Sequence[str]) -> frozenset[int]:
    left = Counter(theirs)
    out = set()
    for n, key in enumerate(mine):
        if left[key] > 0:
            left[key] -= 1
        else:
            out.add(n)
    return frozenset(out)


# -- one side ------------------------------------------------------------------------------
def _side(store: Store, r: Reader, trace: Any, live: list[CallRef], recorded: int) -> Side:
    """One trace: ``live`` are the calls of its current path (``live_calls``), ``recorded``
    the number of all its calls (the difference: calls on abandoned branches)."""
    meta = trace.metadata or {}
    export = json.loads(export_text(store, trace.id))
    metrics = compute(export, current_path=True)
    calls = main_calls(live)
    counted: dict[int, int] = {}
    inputs, bases = call_inputs(r, trace.id, calls, counted)
    every, every_bases = call_inputs(r, trace.id, [c for c in live if c.answered], counted)
    raw = meta.get("run_config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return Side(
        trace.id,
        trace.title,
        trace.source,
        {k: config[k] for k in SETTINGS_SHOWN if k in config},
        metrics,
        inputs,
        tuple(c.output_tokens for c in calls),
        tuple(c.call_index for c in calls),
        _compactions(r, trace.id, calls, current_sequences(export)),
        _retention(r, trace.id, calls),
        meta.get("replay_of") if isinstance(meta.get("replay_of"), dict) else None,
        trace_cost(r, trace.id, load_table()).to_json(),
        bases,
        every,
        every_bases,
        recorded - len(live),
    )


def call_inputs(
    r: Reader, trace_id: str, calls: Sequence[CallRef], counted: dict[int, int] | None = None
) -> tuple[tuple[int, ...], tuple[InputBasis, ...]]:
    """Each call's input tokens and where they come from: the model's recorded usage, else
    ctxlens's count of the request its run sent, else of the context (a call that recorded
    neither). The comparison's sums and the re-run's report both read them here.
    ``counted``: the contexts counted so far, by call (the main agent's calls and all
    calls are summed apart; a context is read and counted once)."""
    memo = {} if counted is None else counted
    inputs = []
    for c in calls:
        value = c.input_tokens
        if value is None:
            value = memo.get(id(c))
            if value is None:
                value = memo[id(c)] = token_breakdown(_context(r, trace_id, c))[0]
        inputs.append(value)
    return tuple(inputs), tuple(c.input_basis for c in calls)


def _compactions(
    r: Reader, trace_id: str, calls: list[CallRef], current: set[int]
) -> tuple[CompactionMark, ...]:
    """The compactions of the current path (``current``: its sequences; one anchored on a
    branch a rewind abandoned is left out)."""
    heads = [c.head if c.head is not None else -1 for c in calls]
    out = []
    for ev in r.compactions(trace_id):
        at = ev.at_sequence
        if at is not None and at not in current:
            continue
        k = next((n for n, h in enumerate(heads) if at is not None and h >= at), None)
        layers = tuple((ev.details or {}).get("layers") or (ev.level,))
        out.append(
            CompactionMark(
                ev.level,
                ev.trigger,
                layers,
                at,
                k,
                ev.tokens_before,
                ev.tokens_after,
                len(ev.removed),
            )
        )
    return tuple(out)


def _retention(r: Reader, trace_id: str, calls: list[CallRef]) -> dict[str, Any]:
    """Facts from the whole main path (as if nothing were compacted) still visible in the
    last main call's context."""
    if not calls:
        return {}
    history = main_path_messages(r, trace_id, calls[-1].head)
    msgs: Mapping[int, Message] = {m.sequence: m for m in history}
    before = View(tuple(ContextItem(m.sequence) for m in history), msgs)
    after = _context(r, trace_id, calls[-1])
    report = retention_report(before, after, load_records(r, trace_id, calls[-1].head, history))
    out = report.to_json()
    out["ratio"] = round(report.ratio(), 4)
    out["counts"] = {
        name: {"kept": len(v["kept"]), "lost": len(v["lost"])}
        for name, v in out.items()
        if isinstance(v, dict) and "kept" in v
    }
    return out


def _summary(a: Side, b: Side, pairs: list[CallPair]) -> dict[str, Any]:
    def both(key: str) -> dict[str, Any]:
        return {"a": a.metrics.get(key), "b": b.metrics.get(key)}

    def sums(x: Sequence[int], y: Sequence[int]) -> dict[str, Any]:
        ia, ib = sum(x), sum(y)
        return {"a": ia, "b": ib, "delta": ib - ia, "ratio": round(ib / ia, 4) if ia else None}

    return {
        "main_calls": {"a": len(a.input_tokens), "b": len(b.input_tokens)},
        "input_tokens": sums(a.input_tokens, b.input_tokens),
        "input_basis": {"a": basis_counts(a.input_basis), "b": basis_counts(b.input_basis)},
        "all_calls": {"a": len(a.all_input_tokens), "b": len(b.all_input_tokens)},
        "input_tokens_all_calls": sums(a.all_input_tokens, b.all_input_tokens),
        "input_basis_all_calls": {
            "a": basis_counts(a.all_input_basis),
            "b": basis_counts(b.all_input_basis),
        },
        "abandoned_calls": {"a": a.abandoned_calls, "b": b.abandoned_calls},
        "compactions": {"a": len(a.compactions), "b": len(b.compactions)},
        "compactions_by_level": both("compactions"),
        "redone_tool_calls": both("redone_tool_calls"),
        "prefix_cache_reuse": both("prefix_cache_reuse"),
        "tool_calls": both("tool_calls"),
        "retention_ratio": {"a": a.retention.get("ratio"), "b": b.retention.get("ratio")},
        "same_context_calls": sum(1 for p in pairs if p.same),
        "cost_usd": {"a": a.cost.get("usd"), "b": b.cost.get("usd")},
    }


# -- where the input tokens come from ------------------------------------------------------
def basis_counts(bases: Sequence[InputBasis]) -> dict[str, int]:
    """``{"recorded": n, "counted": m}``: of a side's main calls, how many inputs are the
    model's recorded usage and how many ctxlens counted (``summary.input_basis``)."""
    return {
        "recorded": sum(b == "recorded" for b in bases),
        "counted": sum(b == "counted" for b in bases),
    }


def basis_text(bases: Sequence[InputBasis]) -> str:
    """A sum's source in words: ``recorded``, ``counted``, ``2 recorded, 1 counted``
    ("" for no call); the comparison window, its HTML report and the CLI say the same."""
    return counts_text(basis_counts(bases))


def counts_text(n: Mapping[str, int]) -> str:
    """``basis_text`` of ``basis_counts`` (a re-run's report keeps only the counts)."""
    if not n.get("recorded") and not n.get("counted"):
        return ""
    if not n.get("counted"):
        return "recorded"
    if not n.get("recorded"):
        return "counted"
    return f"{n['recorded']:,} recorded, {n['counted']:,} counted"


def tokens_text(tokens: int | None, basis: InputBasis | None) -> str:
    """One call's input: ``6,587 (recorded)``, ``4,556 (counted)``, ``—`` (no call)."""
    if tokens is None:
        return "—"
    return f"{tokens:,} ({basis})" if basis else f"{tokens:,}"
