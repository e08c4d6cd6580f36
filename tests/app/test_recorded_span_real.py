"""Review 13b, finding 1: a trace's start and duration (``ctxlens traces --json``) run from
the first start to the last end of anything the file recorded. The any-agent trace said
0.6 s: its span ended at the *start* of the last ``call_llm``, while ``invoke_agent`` ran
1.23 s; a Claude Code session ended at its last message, not its last system record, and
started at its first request, not the SessionStart hooks before it.

The expected times are read from the raw files with plain ``json``."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]
OTEL = TRACES / "otel_genai"
ANY_AGENT = OTEL / "mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
LANGCHAIN = OTEL / "mozilla-ai__any-agent/tests/assets/LANGCHAIN_trace.json"
LANGFUSE = sorted(OTEL.rglob("*.trace.json"))
SPOTTER = next(iter(sorted((TRACES / "claude_code").rglob("258c7280-*.jsonl"))), None)
pytestmark = pytest.mark.skipif(not ANY_AGENT.is_file(), reason="shared/traces not present")


def _row(cli: Cli, tmp_path: Path, path: Path) -> dict[str, Any]:
    db = str(tmp_path / "span.db")
    code, out = cli("--db", db, "import", str(path), "--json")
    assert code == 0, out
    (row,) = json.loads(cli("--db", db, "traces", "--json")[1])
    return row


def _iso(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _sdk_span(path: Path) -> tuple[float, float]:
    """First start and last end of an any-agent span list (nanoseconds)."""
    spans = json.loads(path.read_text(encoding="utf-8"))["spans"]
    return min(s["start_time"] for s in spans) / 1e9, max(s["end_time"] for s in spans) / 1e9


def test_any_agent_run_lasts_from_invoke_agent_start_to_its_end(cli: Cli, tmp_path: Path) -> None:
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    agent = next(s for s in spans if s["name"].startswith("invoke_agent"))
    calls = [s for s in spans if s["name"].startswith("call_llm")]
    last_call = max(calls, key=lambda s: s["start_time"])
    assert agent["end_time"] > last_call["end_time"] > last_call["start_time"]
    row = _row(cli, tmp_path, ANY_AGENT)
    assert row["start"] == pytest.approx(agent["start_time"] / 1e9, abs=1e-6)
    want = (agent["end_time"] - agent["start_time"]) / 1e9
    assert want > 1.2  # the review read 0.6 s, to the last call's start
    assert row["duration"] == pytest.approx(want, abs=1e-6)


def test_langchain_any_agent_span(cli: Cli, tmp_path: Path) -> None:
    start, end = _sdk_span(LANGCHAIN)
    row = _row(cli, tmp_path, LANGCHAIN)
    assert row["start"] == pytest.approx(start, abs=1e-6)
    assert row["duration"] == pytest.approx(end - start, abs=1e-6)


@pytest.mark.parametrize("path", LANGFUSE, ids=lambda p: p.name)
def test_langfuse_observations_span(cli: Cli, tmp_path: Path, path: Path) -> None:
    obs = json.loads(path.read_text(encoding="utf-8"))["observations"]
    starts = [_iso(o["startTime"]) for o in obs if o.get("startTime")]
    ends = [_iso(o["endTime"]) for o in obs if o.get("endTime")]
    row = _row(cli, tmp_path, path)
    assert row["start"] == pytest.approx(min(starts), abs=1e-3)
    assert row["duration"] == pytest.approx(max(starts + ends) - min(starts), abs=1e-3)


@pytest.mark.skipif(SPOTTER is None, reason="shared/traces not present")
def test_claude_code_session_span_counts_its_hook_and_system_records(
    cli: Cli, tmp_path: Path
) -> None:
    assert SPOTTER is not None
    files = [SPOTTER, *sorted(SPOTTER.with_suffix("").rglob("*.jsonl"))]
    times = [
        _iso(rec["timestamp"])
        for f in files
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip() and isinstance(rec := json.loads(line), dict) and rec.get("timestamp")
    ]
    row = _row(cli, tmp_path, SPOTTER)
    assert row["start"] == pytest.approx(min(times), abs=1e-3)
    assert row["duration"] == pytest.approx(max(times) - min(times), abs=1e-3)
