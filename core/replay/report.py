"""A comparison as one self-contained HTML file, for people without ctxlens.

Inline CSS, an inline SVG chart of input tokens per main-agent call (both traces, with
their compactions marked), and tables: the summary metrics, the settings that differ,
every compaction, and the tokens of every call. No script, no external stylesheet, font
or image, no URL: the file opens the same offline, in a mail attachment or a ticket.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from core.replay.calls import InputBasis
from core.replay.compare import Comparison, Side, basis_text, tokens_text

COLORS = {"a": "#3465a4", "b": "#cc5f00"}
WIDTH, HEIGHT, PAD = 880, 280, 48

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:960px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.sub{color:#666;margin:0 0 16px}
table{border-collapse:collapse;width:100%;margin:4px 0 12px}
th,td{border-bottom:1px solid #e2e2e2;padding:3px 8px;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}th{background:#f4f4f4;font-weight:600}
td.l{text-align:left}.diff{background:#fff4d6}.a{color:#3465a4}.b{color:#cc5f00}
.same{color:#4e9a06}.chg{color:#a40000}.legend span{margin-right:18px}
svg{background:#fafafa;border:1px solid #e2e2e2}
details{margin:8px 0}summary{cursor:pointer;color:#444}
"""


def html_report(cmp: Comparison, title: str | None = None) -> str:
    a, b = cmp.a, cmp.b
    heading = title or "Replay comparison"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(heading)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(heading)}</h1>",
        f'<p class="sub"><span class="a">A</span>: {_e(a.title)} <code>{_e(a.trace_id)}</code>'
        f'<br><span class="b">B</span>: {_e(b.title)} <code>{_e(b.trace_id)}</code></p>',
        "<h2>Summary</h2>",
        _summary_table(cmp),
        "<h2>Input tokens per call</h2>",
        _legend(a, b),
        _chart(a, b),
        "<h2>Settings</h2>",
        _settings_table(a, b),
        "<h2>Compactions</h2>",
        _compactions_table(a, "a"),
        _compactions_table(b, "b"),
        "<h2>Retention at the end</h2>",
        _retention_table(a, b),
        "<h2>Tokens per call</h2>",
        _calls_table(cmp),
        '<p class="sub">Made by ctxlens. Calls are the main agent\'s answered model calls, '
        "aligned by their order; “same context” means the two requests were identical "
        "(ref ids mapped).</p>",
        "</body></html>",
    ]
    return "\n".join(parts)


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def fmt_value(value: Any, none: str = "—") -> str:
    """One recorded figure as people read it (4 significant digits, thousands separators,
    a dict as "key value, ..."); the GUI comparison and the HTML report share it."""
    if value is None:
        return none
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {fmt_value(v, none)}" for k, v in value.items()) or "none"
    return str(value)


def _num(value: Any) -> str:
    return html.escape(fmt_value(value, none=""))


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    hs = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    return f'<table class="{cls}"><thead><tr>{hs}</tr></thead><tbody>{body}</tbody></table>'


def _summary_table(cmp: Comparison) -> str:
    s = cmp.summary
    names = [
        ("main_calls", "main-agent calls"),
        ("input_tokens", "input tokens (main-agent calls)"),
        ("input_tokens_all_calls", "input tokens (all calls)"),
        ("cost_usd", "cost, USD (every recorded call, abandoned branches too; none: no price)"),
        ("compactions", "compactions"),
        ("compactions_by_level", "compactions by level"),
        ("redone_tool_calls", "redone tool calls"),
        ("prefix_cache_reuse", "prefix-cache reuse (main agent)"),
        ("tool_calls", "tool calls (all agents)"),
        ("retention_ratio", "retention at the end (contract facts kept)"),
    ]
    rows = []
    for key, label in names:
        pair = s.get(key) or {}
        va, vb = pair.get("a"), pair.get("b")
        cls = ' class="diff"' if va != vb else ""
        ta, tb = _num(va), _num(vb)
        if key == "input_tokens":  # where the calls' inputs come from
            ta += _basis(cmp.a.input_basis)
            tb += _basis(cmp.b.input_basis)
        elif key == "input_tokens_all_calls":
            ta += _basis(cmp.a.all_input_basis)
            tb += _basis(cmp.b.all_input_basis)
        rows.append([f"<td>{_e(label)}</td>", f"<td{cls}>{ta}</td>", f"<td{cls}>{tb}</td>"])
    first = cmp.first_difference
    rows.append(
        [
            "<td>calls with the same context</td>",
            f'<td colspan="2">{s.get("same_context_calls", 0):,} of '
            f"{len(cmp.pairs):,}; first difference at call "
            f"{'none' if first is None else first}</td>",
        ]
    )
    return _table(["", '<span class="a">A</span>', '<span class="b">B</span>'], rows)


def _basis(bases: Sequence[InputBasis]) -> str:
    words = basis_text(bases)
    return f" ({_e(words)})" if words else ""


def _legend(a: Side, b: Side) -> str:
    return (
        '<p class="legend">'
        f'<span style="color:{COLORS["a"]}">━ A{_basis(a.input_basis)}</span>'
        f'<span style="color:{COLORS["b"]}">━ B{_basis(b.input_basis)}</span>'
        "<span>▲ compaction (before that call)</span>"
        "<span>recorded: the model's usage; counted: ctxlens's count</span></p>"
    )


def _chart(a: Side, b: Side) -> str:
    n = max(len(a.input_tokens), len(b.input_tokens), 2)
    top = max([*a.input_tokens, *b.input_tokens, 1])
    w, h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def x(k: float) -> float:
        return PAD + w * k / (n - 1)

    def y(v: float) -> float:
        return PAD + h - h * v / top

    out = [
        f'<svg id="tokens-chart" role="img" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" aria-label="input tokens per call">',
        f'<line x1="{PAD}" y1="{PAD + h}" x2="{PAD + w}" y2="{PAD + h}" stroke="#999"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{PAD + h}" stroke="#999"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        v = top * frac
        out.append(
            f'<text x="{PAD - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">'
            f"{int(v):,}</text>"
        )
    for k in sorted({0, n // 2, n - 1}):
        out.append(
            f'<text x="{x(k):.1f}" y="{PAD + h + 16}" font-size="11" text-anchor="middle">'
            f"{k}</text>"
        )
    out.append(
        f'<text x="{PAD + w / 2}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle">'
        "main-agent call</text>"
    )
    for side, key in ((a, "a"), (b, "b")):
        pts = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in enumerate(side.input_tokens))
        if pts:
            out.append(
                f'<polyline class="series-{key}" fill="none" stroke="{COLORS[key]}" '
                f'stroke-width="1.6" points="{pts}"/>'
            )
        base = PAD + h + (24 if key == "b" else 30) - 30
        for c in side.compactions:
            if c.before_call is None:
                continue
            cx = x(c.before_call)
            out.append(
                f'<path d="M{cx:.1f},{base - 8:.1f} l4,7 h-8 z" fill="{COLORS[key]}">'
                f"<title>{_e(key.upper())}: {_e(c.level)} before call {c.before_call}: "
                f"{c.tokens_before:,} → {c.tokens_after:,} tokens</title></path>"
            )
    out.append("</svg>")
    return "".join(out)


def _settings_table(a: Side, b: Side) -> str:
    keys = list(dict.fromkeys([*a.settings, *b.settings]))
    rows = []
    for k in keys:
        va, vb = a.settings.get(k), b.settings.get(k)
        cls = ' class="diff"' if va != vb else ""
        rows.append([f"<td>{_e(k)}</td>", f"<td{cls}>{_e(va)}</td>", f"<td{cls}>{_e(vb)}</td>"])
    if b.replay_of:
        r = b.replay_of
        rows.append(
            [
                "<td>B replays</td>",
                f'<td colspan="2">{_e(r.get("trace"))} from call {_e(r.get("from_call"))} '
                f"with {_e(', '.join(r.get('settings') or []) or 'its own settings')}</td>",
            ]
        )
    return _table(["setting", "A", "B"], rows)


def _compactions_table(side: Side, key: str) -> str:
    rows = [
        [
            f"<td>{n}</td>",
            f'<td class="l">{_e(c.level)}</td>',
            f'<td class="l">{_e(", ".join(c.layers))}</td>',
            f"<td>{_e(c.trigger)}</td>",
            f"<td>{_e(c.before_call)}</td>",
            f"<td>{c.tokens_before:,}</td>",
            f"<td>{c.tokens_after:,}</td>",
            f"<td>{c.removed:,}</td>",
        ]
        for n, c in enumerate(side.compactions)
    ]
    label = f'<p><span class="{key}">{key.upper()}</span>: {len(rows)} compaction(s)</p>'
    if not rows:
        return label
    head = ["#", "level", "layers", "trigger", "before call", "tokens before", "after", "removed"]
    return label + _table(head, rows)


def _retention_table(a: Side, b: Side) -> str:
    ca, cb = a.retention.get("counts", {}), b.retention.get("counts", {})
    rows = []
    for field in dict.fromkeys([*ca, *cb]):
        ka, kb = ca.get(field, {}), cb.get(field, {})
        sa = f"{ka.get('kept', 0)} kept, {ka.get('lost', 0)} lost" if ka else "—"
        sb = f"{kb.get('kept', 0)} kept, {kb.get('lost', 0)} lost" if kb else "—"
        cls = ' class="diff"' if sa != sb else ""
        rows.append([f"<td>{_e(field)}</td>", f"<td{cls}>{sa}</td>", f"<td{cls}>{sb}</td>"])
    return _table(["facts of the whole history", "A", "B"], rows)


def _calls_table(cmp: Comparison) -> str:
    rows = []
    for p in cmp.pairs:
        delta = (
            (p.b_tokens - p.a_tokens) if p.a_tokens is not None and p.b_tokens is not None else None
        )
        same = (
            '<span class="same">same</span>'
            if p.same
            else (f'<span class="chg">{p.only_a} only in A, {p.only_b} only in B</span>')
        )
        rows.append(
            [
                f"<td>{p.k}</td>",
                f"<td>{_e(tokens_text(p.a_tokens, p.a_tokens_basis))}</td>",
                f"<td>{_e(tokens_text(p.b_tokens, p.b_tokens_basis))}</td>",
                f"<td>{'' if delta is None else f'{delta:+,}'}</td>",
                f'<td class="l">{same}</td>',
            ]
        )
    head = ["call", "A input tokens", "B input tokens", "B − A", "context"]
    table = _table(head, rows)
    return f"<details open><summary>{len(rows)} calls</summary>{table}</details>"
