"""Review findings 3 and 9: the next call of an imported Claude Code session is measured by
the prompt the session recorded (its last main call's prompt + what came after), not by the
transcript alone, and ``compact`` uses the trace's window and auto-compact point.

The recorded prompt comes from the raw file (plain ``json``): input + cache reads + cache
writes of the last API response of the main session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")

SESSION = (
    TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
    / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)  # fmt: skip
Cli = Callable[..., tuple[int, str]]


def last_main_prompt(path: Path) -> int:
    last: dict[str, Any] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "assistant" and rec["message"].get("model") != "<synthetic>":
            last[rec["message"]["id"]] = rec["message"]["usage"]
    u = list(last.values())[-1]
    return int(u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"])


def imported(cli: Cli, tmp_path: Path) -> tuple[str, str]:
    db = str(tmp_path / "s.db")
    code, _ = cli("--db", db, "import", str(SESSION))
    assert code == 0
    trace_id = json.loads(cli("--db", db, "traces", "--json")[1])[0]["id"]
    return db, trace_id


def test_next_call_free_space_counts_the_recorded_prompt(cli: Cli, tmp_path: Path) -> None:
    db, trace_id = imported(cli, tmp_path)
    code, out = cli("--db", db, "context", trace_id, "--json")
    data = json.loads(out)
    carried, counted = data["carried_from"], data["tokens"]["total"]
    assert code == 0 and carried["recorded_prompt_tokens"] == last_main_prompt(SESSION)
    gap = carried["recorded_prompt_tokens"] - carried["reconstructed_tokens"]
    assert gap > 0 and data["unexplained_tokens"] == carried["tokens"] == gap
    assert data["prompt_tokens"] == counted + gap > carried["recorded_prompt_tokens"]
    assert data["free_tokens"] == data["window"]["tokens"] - data["prompt_tokens"]
    code, text = cli("--db", db, "context", trace_id)
    assert f"{gap} not in the transcript" in text


def test_compact_auto_uses_the_traces_window_and_says_which(cli: Cli, tmp_path: Path) -> None:
    db, trace_id = imported(cli, tmp_path)
    ctx = json.loads(cli("--db", db, "context", trace_id, "--json")[1])
    code, out = cli("--db", db, "compact", trace_id, "--level", "auto", "--json")
    limits = json.loads(out)["limits"]
    assert code == 0 and limits["window"] == ctx["window"]
    assert limits["threshold"]["tokens"] == ctx["limits"]["auto-compact point"]
    assert limits["threshold"]["source"] == "auto-compact point"
    assert limits["not_in_transcript"] == ctx["carried_from"]["tokens"]
    code, text = cli("--db", db, "compact", trace_id, "--level", "auto")
    window = f"window {ctx['window']['tokens']:,} ({ctx['window']['source'].replace('-', ' ')})"
    assert window in text and "128,000" not in text and "64000" not in text
    limit = ctx["limits"]["auto-compact point"] - ctx["carried_from"]["tokens"]
    assert f"within the {limit:,}-token threshold)" in text.splitlines()[0]
    code, out = cli("--db", db, "compact", trace_id, "--level", "auto", "--json")
    assert json.loads(out)["limit_tokens"] == limit
