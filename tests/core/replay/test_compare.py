"""Comparing a run with its replay, and the self-contained HTML report."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from core.exporters.ctxlens_json import export_text
from core.inspector.comparison import context_diff
from core.replay.compare import Comparison, compare
from core.replay.report import html_report
from core.replay.rerun import ReplayOptions, replay
from core.run.metrics import compute
from core.store import Store


@pytest.fixture(scope="module")
def pair(demo_store: tuple[Store, str]) -> tuple[Store, str, str, Comparison]:
    store, source = demo_store
    result = replay(store, source, ReplayOptions(settings=("window=8000",)))
    return store, source, result.trace_id, compare(store, source, result.trace_id)


def test_the_comparison_matches_each_trace_measured_on_its_own(
    pair: tuple[Store, str, str, Comparison],
) -> None:
    store, a, b, cmp = pair
    for side, tid in ((cmp.a, a), (cmp.b, b)):
        assert side.metrics == compute(json.loads(export_text(store, tid)))
        with store.read() as r:
            main = [c for c in r.llm_calls(tid) if c.agent_name == "main" and c.error is None]
            # what the model's usage recorded wins over ctxlens's own count (review 13a,
            # finding 3): every demo call records its prompt tokens
            assert all(c.usage["prompt_tokens"] for c in main)
            assert list(side.input_tokens) == [c.usage["prompt_tokens"] for c in main]
            assert len(side.compactions) == len(r.compactions(tid))
    s = cmp.summary
    assert s["input_tokens"] == {
        "a": sum(cmp.a.input_tokens),
        "b": sum(cmp.b.input_tokens),
        "delta": sum(cmp.b.input_tokens) - sum(cmp.a.input_tokens),
        "ratio": round(sum(cmp.b.input_tokens) / sum(cmp.a.input_tokens), 4),
    }
    assert s["compactions"]["b"] > s["compactions"]["a"]
    assert cmp.b.replay_of == {"trace": a, "from_call": 0, "settings": ["window=8000"]}
    assert cmp.a.settings["window"] == 16_000 and cmp.b.settings["window"] == 8000
    with store.read() as r:
        ha = [c.request_sha256 for c in r.llm_calls(a) if c.agent_name == "main"]
        hb = [c.request_sha256 for c in r.llm_calls(b) if c.agent_name == "main"]
    first = next(k for k, (x, y) in enumerate(zip(ha, hb, strict=False)) if x != y)
    assert cmp.first_difference == first
    assert all(p.same for p in cmp.pairs[:first]) and not cmp.pairs[first].same
    assert 0 <= cmp.b.retention["ratio"] <= 1 and "completed_steps" in cmp.b.retention
    json.dumps(cmp.to_json())


def test_the_side_by_side_rows_of_one_call(pair: tuple[Store, str, str, Comparison]) -> None:
    store, a, b, cmp = pair
    k = cmp.first_difference
    assert k is not None
    diff = context_diff(store, a, b, k)
    assert not diff.same and diff.only_a and diff.only_b
    assert len(diff.only_a) == cmp.pairs[k].only_a and len(diff.only_b) == cmp.pairs[k].only_b
    assert context_diff(store, a, b, 0).same


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.open: list[str] = []
        self.text: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [v or "" for _, v in attrs]
        if tag not in ("meta", "br", "line", "path", "polyline"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("meta", "br", "line", "path", "polyline"):
            return
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1:]}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_the_html_report_stands_alone(pair: tuple[Store, str, str, Comparison]) -> None:
    _, _, _, cmp = pair
    page = html_report(cmp)
    assert not re.search(r"https?://", page), "no URL of any kind"
    parser = _Collect()
    parser.feed(page)
    parser.close()
    assert parser.open == [], "every element is closed"
    assert "script" not in parser.tags and "link" not in parser.tags and "img" not in parser.tags
    assert not any(v.startswith(("http", "//")) for v in parser.attrs)
    assert "svg" in parser.tags and parser.tags.count("polyline") == 2
    text = " ".join(parser.text)
    s = cmp.summary
    for number in (s["input_tokens"]["a"], s["input_tokens"]["b"]):
        assert f"{number:,}" in text
    assert f"{s['prefix_cache_reuse']['b']:.4g}" in text
    assert cmp.a.trace_id in text and cmp.b.trace_id in text
    assert len(re.findall(r"<path d=", page)) == len(cmp.a.compactions) + len(cmp.b.compactions)
