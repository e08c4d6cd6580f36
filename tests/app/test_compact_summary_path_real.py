"""Issue 13, finding 2: a real Claude Code compaction's summary is on the main path right
after the ``compact_boundary`` record (where Claude Code put it into the model's context),
and the ``agent-acompact-*`` transcript is the compaction's own model call, linked to it.

Expectations come from the raw files (plain ``json``): the boundary and summary records,
the summariser's prompt and its recorded usage."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")

DIR = TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
SESSION = DIR / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
COMPACT = DIR / "258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl"
Cli = Callable[..., tuple[int, str]]


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def recorded_prompt(usage: dict[str, int]) -> int:
    return (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )


def imported(cli: Cli, tmp_path: Path) -> tuple[str, str]:
    db = str(tmp_path / "s.db")
    assert cli("--db", db, "import", str(SESSION))[0] == 0
    return db, json.loads(cli("--db", db, "traces", "--json")[1])[0]["id"]


def cli_json(cli: Cli, *argv: str) -> Any:
    code, out = cli(*argv)
    assert code == 0
    return json.loads(out)


def test_summary_follows_the_boundary_on_the_main_path(cli: Cli, tmp_path: Path) -> None:
    recs = records(SESSION)
    (boundary,) = [r for r in recs if r.get("subtype") == "compact_boundary"]
    (summary,) = [r for r in recs if r.get("isCompactSummary")]
    assert summary["parentUuid"] == boundary["uuid"]
    db, trace_id = imported(cli, tmp_path)
    path = cli_json(cli, "--db", db, "show", trace_id, "--json")["messages"]
    at = next(n for n, m in enumerate(path) if m["content"].startswith("Conversation compacted"))
    after = path[at + 1]
    assert after["content"] == summary["message"]["content"]
    assert (after["kind"], after["branch_type"], after["agent_name"]) == ("summary", None, "main")
    assert after["in_context"] is True and path[at - 1]["in_context"] is False
    assert not any(m["branch_type"] for m in path)

    # The first main call after the boundary received the summary first, and the next call,
    # the playback at that call and the OTLP export all agree on it.
    calls = cli_json(cli, "--db", db, "context", trace_id, "--json")
    dump = tmp_path / "t.json"
    assert cli("--db", db, "export", trace_id, "-o", str(dump))[0] == 0
    (ev,) = json.loads(dump.read_text())["compactions"]
    first = min(
        c["call_index"]
        for c in json.loads(dump.read_text())["llm_calls"]
        if c["agent_name"] == "main" and c["context"][:1] == [ev["summary_sequence"]]
    )
    at_first = cli_json(cli, "--db", db, "context", trace_id, "--call", str(first), "--json")
    assert [m["content"] for m in at_first["messages"]] == [summary["message"]["content"]]
    assert calls["messages"][0]["content"] == summary["message"]["content"]
    out = tmp_path / "otlp.json"
    assert cli("--db", db, "export", trace_id, "--format", "otlp", "-o", str(out))[0] == 0
    spans = [
        {a["key"]: a["value"] for a in s["attributes"]}
        for rs in json.loads(out.read_text())["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
    ]
    sent = [json.loads(s["gen_ai.input.messages"]["stringValue"]) for s in spans
            if "gen_ai.input.messages" in s]  # fmt: skip
    assert [m["parts"][0]["content"] for m in sent[first]] == [summary["message"]["content"]]


def test_the_acompact_transcript_is_the_compactions_model_call(cli: Cli, tmp_path: Path) -> None:
    recs = records(COMPACT)
    replies = {r["message"]["id"]: r["message"]["usage"] for r in recs if r["type"] == "assistant"}
    (usage,) = replies.values()
    prompt = next(r for r in recs if r["type"] == "user" and "detailed summary" in str(r))
    db, trace_id = imported(cli, tmp_path)
    export = tmp_path / "t.json"
    assert cli("--db", db, "export", trace_id, "-o", str(export))[0] == 0
    dump = json.loads(export.read_text())
    (ev,) = dump["compactions"]
    run = ev["details"]["summarizer"]
    assert run["branch_id"] == "acompact-fffbd0"
    (call,) = [c for c in dump["llm_calls"] if c["agent_name"] == "compact"]
    data = cli_json(cli, "--db", db, "context", trace_id, "--call", str(call["call_index"]),
                    "--json")  # fmt: skip
    assert data["recorded"]["prompt_tokens"] == recorded_prompt(usage)
    # It read the conversation it summarized (the main path up to the fork), then its prompt.
    assert data["messages"][0]["content"] == "Implement spotter-gqc"
    assert data["messages"][-1]["content"] == prompt["message"]["content"]
    main = [c for c in dump["llm_calls"] if c["agent_name"] == "main"]
    before = max(c["call_index"] for c in main if c["call_index"] < call["call_index"])
    gap = cli_json(cli, "--db", db, "context", trace_id, "--call", str(before), "--json")
    # So its gap to the record is the system prompt and tools, as the main calls' is, not the
    # 160k-token conversation the old three-message context left out.
    assert abs(data["unexplained_tokens"] - gap["unexplained_tokens"]) < 5_000
