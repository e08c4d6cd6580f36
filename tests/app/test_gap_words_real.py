"""Review 13b, finding 2: the words for the recorded prompt tokens the transcript does not
account for ("N not in the transcript (…)") name only what the context can lack.

On the Inspect popularity eval the context pane said "5 not in the transcript (system
prompt, tool definitions and other parts the tool did not log)", yet the sample's system
message is in the context and counted and the model event recorded no tools: the few
tokens are the chat format's framing of each message. ``ctxlens context --json`` keeps its
keys and adds ``not_in_transcript {tokens, text, may_hold}``.

Expected values come from the raw files (plain ``json``)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]
EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*popularity*.eval"))), None)
ANY_AGENT = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
SESSION = next(iter(sorted((TRACES / "claude_code").rglob("258c7280-*.jsonl"))), None)
LITELLM = next(iter(sorted((TRACES / "chat_messages").rglob("litellm_proxy__*.json"))), None)
pytestmark = pytest.mark.skipif(EVAL is None, reason="shared/traces not present")
FRAMING = (
    "not in the transcript (message framing: the tokens the provider adds around each "
    "message, or a tokenizer difference)"
)
OLD_KEYS = {"call", "messages", "tokens", "request_sha256", "recorded_sha256", "cost", "window",
            "recorded", "reconstructed_tokens", "unexplained_tokens", "context", "limits",
            "prompt_tokens", "free_tokens", "carried_from", "image_tokens_estimated", "images",
            "components"}  # fmt: skip


def _import(cli: Cli, db: str, path: Path) -> list[dict[str, Any]]:
    code, out = cli("--db", db, "import", str(path), "--json")
    assert code == 0, out
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _context(cli: Cli, db: str, trace_id: str, *more: str) -> dict[str, Any]:
    code, out = cli("--db", db, "context", trace_id, "--json", *more)
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    return data


def _samples(path: Path) -> dict[str, dict[str, Any]]:
    """Each sample's model event, by its title's '#id ' prefix."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if name.startswith("samples/"):
                sample = json.loads(z.read(name))
                (model,) = [e for e in sample["events"] if e["event"] == "model"]
                out[f"#{sample['id']} "] = {"sample": sample, "model": model}
    return out


def test_inspect_gap_is_message_framing(cli: Cli, tmp_path: Path) -> None:
    assert EVAL is not None
    db = str(tmp_path / "ev.db")
    _import(cli, db, EVAL)
    traces = json.loads(cli("--db", db, "traces", "--json")[1])
    raw = _samples(EVAL)
    assert len(traces) == len(raw) == 10
    for tr in traces:
        (key,) = [k for k in raw if f" {k}" in tr["title"]]
        model, sample = raw[key]["model"], raw[key]["sample"]
        # the raw record: a system message in the input, no tools, a prompt a few tokens
        # over the transcript (OpenAI's chat format adds 3 a message and 3 a request)
        assert [m["role"] for m in model["input"]] == ["system", "user"]
        assert model["tools"] == [] and sample["messages"][0]["role"] == "system"
        data = _context(cli, db, tr["id"], "--call", "0")
        assert set(data) >= OLD_KEYS
        recorded = model["output"]["usage"]["input_tokens"]
        assert data["recorded"]["prompt_tokens"] == recorded
        gap = recorded - data["reconstructed_tokens"]
        assert data["unexplained_tokens"] == gap
        assert 0 < gap <= 3 * len(model["input"]) + 3
        assert data["not_in_transcript"] == {
            "tokens": gap,
            "text": FRAMING,
            "may_hold": ["message framing", "tokenizer difference"],
        }
        system = next(c for c in data["components"] if c["name"] == "system")
        assert system["tokens"] > 0
        code, text = cli("--db", db, "context", tr["id"], "--call", "0")
        assert code == 0 and f"; {gap} {FRAMING}\n" in text
        assert "system prompt" not in text and "tool definitions" not in text


def test_any_agent_gap_holds_tool_definitions_not_the_system_prompt(
    cli: Cli, tmp_path: Path
) -> None:
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    calls = [s for s in spans if s["name"].startswith("call_llm")]
    # the first call logged its input, a system message first; the others continue it
    sent = json.loads(calls[0]["attributes"]["gen_ai.input.messages"])
    assert sent[0]["role"] == "system"
    assert not any("tool" in k for s in calls for k in s["attributes"] if "output" not in k), (
        "no tool definitions recorded"
    )
    db = str(tmp_path / "otel.db")
    (row,) = _import(cli, db, ANY_AGENT)
    data = _context(cli, db, row["trace_id"])  # the next call, measured at the last one
    last = int(calls[-1]["attributes"]["gen_ai.usage.input_tokens"])
    assert data["carried_from"]["recorded_prompt_tokens"] == last
    gap = data["unexplained_tokens"]
    assert gap == last - data["carried_from"]["reconstructed_tokens"]
    assert gap > 3 * data["carried_from"]["items"] + 3, "more than the messages' framing"
    assert data["carried_from"]["system_in_context"] is True
    assert data["not_in_transcript"]["may_hold"] == [
        "tool definitions",
        "other parts the tool did not log",
    ]
    code, text = cli("--db", db, "context", row["trace_id"])
    words = "not in the transcript (tool definitions and other parts the tool did not log)"
    assert code == 0 and f"{gap} {words}" in text


@pytest.mark.skipif(LITELLM is None, reason="shared/traces not present")
def test_a_completion_log_names_the_tool_definitions_it_sent(cli: Cli, tmp_path: Path) -> None:
    assert LITELLM is not None
    log = json.loads(LITELLM.read_text(encoding="utf-8"))
    assert log["messages"][0]["role"] == "system" and len(log["tools"]) > 0
    db = str(tmp_path / "log.db")
    (row,) = _import(cli, db, LITELLM)
    data = _context(cli, db, row["trace_id"], "--call", "0")
    n = len(log["tools"])
    assert data["unexplained_tokens"] > 0
    assert data["not_in_transcript"]["may_hold"] == [
        f"{n} tool definitions",
        "other parts the tool did not log",
    ]


@pytest.mark.skipif(SESSION is None, reason="shared/traces not present")
def test_claude_code_gap_still_names_the_system_prompt(cli: Cli, tmp_path: Path) -> None:
    """Claude Code logs neither its system prompt nor its tools: both stay named."""
    assert SESSION is not None
    first = next(
        json.loads(line)
        for line in SESSION.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line).get("type") == "assistant"
    )
    assert "system" not in first["message"]  # the reply records no request
    db = str(tmp_path / "cc.db")
    (row,) = _import(cli, db, SESSION)
    data = _context(cli, db, row["trace_id"], "--call", "0")
    assert not any(c["name"] == "system" and c["tokens"] for c in data["components"])
    assert data["not_in_transcript"]["text"] == (
        "not in the transcript (system prompt, tool definitions and other parts the tool did "
        "not log)"
    )
