"""Rows of the comparison view (issue 9, part 2, in the window).

``core/replay/compare.py:compare`` computes the comparison; this module only shapes it for
the window's tables: the summary metrics with both values and the delta, the settings
that differ, the call list (tokens of both, same context or how many messages only one
side had), the retention report at the end, the default name of the HTML export, and the
rows of one pair of calls side by side (``context_diff``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.context.view import View
from core.inspector.context_report import ReportRow, report_row
from core.inspector.wording import counted
from core.replay.calls import InputBasis
from core.replay.compare import CallPair, Comparison, basis_text, context_pair
from core.replay.report import fmt_value, html_report
from core.store import Store


@dataclass(frozen=True, slots=True)
class MetricRow:
    key: str
    label: str
    a: str
    b: str
    delta: str
    """B − A (empty when the values are not numbers)."""
    changed: bool


METRICS = (
    ("main_calls", "main-agent calls"),
    ("input_tokens", "input tokens (main-agent calls)"),
    ("input_tokens_all_calls", "input tokens (all calls)"),
    ("compactions", "compactions"),
    ("compactions_by_level", "compactions by level"),
    ("redone_tool_calls", "redone tool calls"),
    ("prefix_cache_reuse", "prefix-cache reuse (main agent)"),
    ("tool_calls", "tool calls (all agents)"),
    ("retention_ratio", "retention at the end"),
)
"""Summary rows: every figure is of each trace's current path (``core/replay/compare.py``);
"all calls" and "all agents" include subagents and side branches."""


def metric_rows(cmp: Comparison) -> list[MetricRow]:
    out = []
    bases = {
        "input_tokens": (cmp.a.input_basis, cmp.b.input_basis),
        "input_tokens_all_calls": (cmp.a.all_input_basis, cmp.b.all_input_basis),
    }
    for key, label in METRICS:
        pair = cmp.summary.get(key) or {}
        a, b = pair.get("a"), pair.get("b")
        ta, tb = fmt_value(a), fmt_value(b)
        if key in bases:  # each sum says where its calls' inputs come from
            ta, tb = _with_basis(ta, bases[key][0]), _with_basis(tb, bases[key][1])
        out.append(MetricRow(key, label, ta, tb, delta(a, b), a != b))
    same = cmp.summary.get("same_context_calls", 0)
    first = cmp.first_difference
    text = f"{same:,} of {len(cmp.pairs):,}"
    where = "no difference" if first is None else f"first differs at call {first}"
    out.append(
        MetricRow("same_context_calls", "same-context calls", text, "", where,
                  first is not None)
    )  # fmt: skip
    return out


def abandoned_note(cmp: Comparison) -> str | None:
    """What the figures leave out: calls on branches a rewind abandoned (``None``: none)."""
    parts = [
        f"{name} {counted(side.abandoned_calls, 'call')}"
        for name, side in (("A", cmp.a), ("B", cmp.b))
        if side.abandoned_calls
    ]
    if not parts:
        return None
    return (
        f"Branches abandoned by a rewind are not counted ({' and '.join(parts)}): every "
        "figure is of each trace's current path."
    )


def _with_basis(text: str, bases: tuple[InputBasis, ...]) -> str:
    """``1,020 (recorded)``, ``47,099 (counted)``, ``9,310 (2 recorded, 1 counted)``."""
    words = basis_text(bases)
    return f"{text} ({words})" if words else text


def delta(a: Any, b: Any) -> str:
    numbers = (int, float)
    if not isinstance(a, numbers) or not isinstance(b, numbers) or isinstance(a, bool):
        return ""
    d = b - a
    if not d:
        return "0"
    if isinstance(d, float):
        text = f"{d:+.4g}"
    else:
        text = f"{d:+,}"
    if a:
        pct = 100 * d / a
        text += f" ({pct:+.0f} %)" if abs(pct) >= 10 else f" ({pct:+.1f} %)"
    return text


@dataclass(frozen=True, slots=True)
class SettingRow:
    key: str
    a: str
    b: str
    changed: bool


def setting_rows(cmp: Comparison) -> list[SettingRow]:
    """The run settings of both sides, those that differ first."""
    keys = list(dict.fromkeys([*cmp.a.settings, *cmp.b.settings]))
    rows = [
        SettingRow(k, fmt_value(cmp.a.settings.get(k)), fmt_value(cmp.b.settings.get(k)),
                   cmp.a.settings.get(k) != cmp.b.settings.get(k))
        for k in keys
    ]  # fmt: skip
    return sorted(rows, key=lambda r: not r.changed)


def call_text(p: CallPair) -> str:
    """The call list's last column: "same", or messages only in A / only in B."""
    if not (p.in_a and p.in_b):  # a derived call has no call_index: not "only in" the other
        return "only in " + ("A" if p.in_a else "B")
    if p.same:
        return "same"
    return f"{p.only_a} / {p.only_b}"


def call_delta(p: CallPair) -> str:
    if p.a_tokens is None or p.b_tokens is None:
        return ""
    return f"{p.b_tokens - p.a_tokens:+,}"


@dataclass(frozen=True, slots=True)
class RetentionRow:
    field: str
    a: str
    b: str
    lost_a: tuple[str, ...]
    lost_b: tuple[str, ...]
    changed: bool


def retention_rows(cmp: Comparison) -> list[RetentionRow]:
    """Facts of the whole history still in the last call's context, per kind."""
    ra, rb = cmp.a.retention, cmp.b.retention
    ca, cb = ra.get("counts", {}), rb.get("counts", {})
    out = []
    for name in dict.fromkeys([*ca, *cb]):
        ta, tb = _kept(ca.get(name)), _kept(cb.get(name))
        out.append(
            RetentionRow(name.replace("_", " "), ta, tb, _lost(ra, name), _lost(rb, name),
                         ta != tb)
        )  # fmt: skip
    return out


def _kept(counts: Any) -> str:
    if not isinstance(counts, dict):
        return "—"
    return f"{counts.get('kept', 0):,} kept, {counts.get('lost', 0):,} lost"


def _lost(retention: dict[str, Any], name: str) -> tuple[str, ...]:
    part = retention.get(name)
    lost = part.get("lost") if isinstance(part, dict) else None
    return tuple(str(x) for x in lost) if isinstance(lost, list) else ()


def report_name(cmp: Comparison) -> str:
    """A file name for the HTML export: ``compare-<A>-<B>.html``."""
    return f"compare-{_slug(cmp.a.trace_id)}-{_slug(cmp.b.trace_id)}.html"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "", text)[:16] or "trace"


def export_html(cmp: Comparison, path: str | Path) -> Path:
    """Write the self-contained report (``core/replay/report.py:html_report``)."""
    out = Path(path)
    out.write_text(html_report(cmp), encoding="utf-8")
    return out


# -- one pair of calls, side by side ------------------------------------------------------
@dataclass(frozen=True)
class ContextDiffRows:
    """What one pair of calls saw: rows of each context, and which are only on one side."""

    k: int
    a_rows: tuple[ReportRow, ...]
    b_rows: tuple[ReportRow, ...]
    only_a: frozenset[int]
    """Indexes into ``a_rows`` of messages B's context did not have."""
    only_b: frozenset[int]
    same: bool

    def to_json(self) -> dict[str, Any]:
        def rows(rs: tuple[ReportRow, ...], only: frozenset[int]) -> list[dict[str, Any]]:
            return [
                {**{n: getattr(x, n) for n in x.__slots__}, "only_here": x.index in only}
                for x in rs
            ]

        return {
            "k": self.k,
            "same": self.same,
            "a": rows(self.a_rows, self.only_a),
            "b": rows(self.b_rows, self.only_b),
        }


def context_diff(store: Store, a: str, b: str, k: int) -> ContextDiffRows:
    """The k-th main call of ``a`` and of ``b`` side by side (for the comparison view)."""
    p = context_pair(store, a, b, k)
    return ContextDiffRows(p.k, _rows(p.a), _rows(p.b), p.only_a, p.only_b, p.same)


def _rows(view: View) -> tuple[ReportRow, ...]:
    """Rows as the context view shows them (``core/inspector/context_report.py``)."""
    return tuple(report_row(n, entry) for n, entry in enumerate(view.entries))
