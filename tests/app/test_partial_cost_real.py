"""Review finding 1: a cost that prices only some calls of a real trace is shown as a lower
bound ("≥ $0.17 (3 of 156 calls priced)"), never as the total; with every call priced it is
the sum an independent reading of the raw file gives at the vendors' list prices."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")

SPOTTER = (
    TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
    / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)  # fmt: skip
#: USD per million tokens (input, output, cache read, 5-minute cache write), vendor list prices
LIST = {"claude-opus-4-6": (5, 25, 0.5, 6.25), "claude-sonnet-4-5-20250929": (3, 15, 0.3, 3.75)}
Cli = Callable[..., tuple[int, str]]


def _raw_cost(path: Path) -> tuple[float, int]:
    """USD and calls of the session and its subagents: one call per ``message.id``."""
    total, calls = 0.0, 0
    for f in [path, *sorted(path.with_suffix("").glob("subagents/*.jsonl"))]:
        last: dict[str, Any] = {}
        for line in f.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line) if line.strip() else {}
            msg = rec.get("message")
            if rec.get("type") == "assistant" and isinstance(msg, dict) and msg.get("usage"):
                last[msg["id"]] = msg
        for msg in last.values():
            i, o, r, w = LIST[msg["model"]]
            u = msg["usage"]
            total += (u["input_tokens"] * i + u["output_tokens"] * o
                      + u.get("cache_read_input_tokens", 0) * r
                      + u.get("cache_creation_input_tokens", 0) * w) / 1e6  # fmt: skip
        calls += len(last)
    return total, calls


def _imported(cli: Cli, tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    code, _ = cli("--db", str(db), "import", str(SPOTTER))
    assert code == 0
    return db


def _no_opus_cache_price(tmp_path: Path) -> Path:
    """A user table without Opus 4.6's cache-read price: its cached calls are unpriced."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"claude-opus-4-6": {"cache_read": None}}}))
    return prices


def test_every_call_priced_is_the_raw_files_sum(cli: Cli, tmp_path: Path) -> None:
    db = _imported(cli, tmp_path)
    usd, calls = _raw_cost(SPOTTER)
    cost = json.loads(cli("--db", str(db), "traces", "--json")[1])[0]["cost"]
    assert cost["cost_complete"] is True and cost["priced_calls"] == calls == cost["calls"]
    assert cost["usd"] == pytest.approx(usd, abs=1e-5) and usd > 10


def test_a_partly_priced_trace_says_its_cost_is_a_lower_bound(cli: Cli, tmp_path: Path) -> None:
    db = _imported(cli, tmp_path)
    prices = _no_opus_cache_price(tmp_path)
    code, out = cli("--db", str(db), "traces", "--json", "--prices", str(prices))
    row = json.loads(out)[0]
    cost, calls = row["cost"], _raw_cost(SPOTTER)[1]
    assert code == 0 and cost["cost_complete"] is False and cost["calls"] == calls
    assert 0 < cost["priced_calls"] < calls and cost["unpriced_models"] == ["claude-opus-4-6"]
    expect = f"≥ ${cost['usd']:,.2f} ({cost['priced_calls']} of {calls} calls priced)"
    assert cost["text"] == expect
    code, text = cli("--db", str(db), "traces", "--prices", str(prices))
    assert expect in text
