"""What a Claude Code session's raw files record, read with plain ``json`` (expectations
independent of the importer)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import TRACES

SPOTTER = (
    TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
    / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)  # fmt: skip
"""The spotter session: 156 calls (a compaction summarizer's and a subagent's among them)."""


def recorded_usage(session: Path) -> int:
    """Prompt (input, cache reads and writes) and output tokens of every API response of
    the session and its subagent files (one per message id: the last record's usage)."""
    total = 0
    for path in (session, *sorted((session.with_suffix("") / "subagents").glob("*.jsonl"))):
        last: dict[str, dict[str, int]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("type") == "assistant" and rec["message"].get("model") != "<synthetic>":
                last[rec["message"]["id"]] = rec["message"]["usage"]
        total += sum(
            u["input_tokens"] + u.get("cache_read_input_tokens", 0)
            + u.get("cache_creation_input_tokens", 0) + u["output_tokens"]
            for u in last.values()
        )  # fmt: skip
    return total


def pre_tokens(path: Path) -> int:
    """``compactMetadata.preTokens`` of the session's auto compaction (the raw file)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        meta = json.loads(line).get("compactMetadata")
        if meta and meta.get("trigger") == "auto":
            return int(meta["preTokens"])
    raise AssertionError("no auto compaction in the session")


def calls_before_auto_compaction(path: Path) -> int:
    """How many API responses (distinct ``message.id`` of the assistant's records, as
    ``cc_prompts`` numbers the calls) the session's raw file holds before its first
    ``auto`` compaction: the number of the first call made after it."""
    ids: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        meta = rec.get("compactMetadata")
        if meta and meta.get("trigger") == "auto":
            return len(ids)
        msg = rec.get("message") or {}
        if rec.get("type") == "assistant" and msg.get("model") != "<synthetic>":
            ids.add(msg["id"])
    raise AssertionError("no auto compaction in the session")
