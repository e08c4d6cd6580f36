"""A span's cache tokens (the GenAI conventions' ``gen_ai.usage.cache_read.input_tokens``
and ``…cache_creation.input_tokens``) are the call's recorded cache figures, so its cost is
priced with cache reads at the cache price (live review: they were ignored, and a call with
9,000 of 10,000 input tokens read from the cache was priced as 10,000 fresh ones)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def _span(usage: dict[str, int]) -> dict[str, Any]:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]
        ),
    }
    values = [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
    values += [{"key": k, "value": {"intValue": str(v)}} for k, v in usage.items()]
    return {
        "traceId": "0123456789abcdef0123456789abcdef",
        "spanId": "0123456789abcdef",
        "name": "chat claude-sonnet-4-5",
        "kind": 3,
        "startTimeUnixNano": "1765000000000000000",
        "endTimeUnixNano": "1765000002000000000",
        "attributes": values,
    }


def _recorded(cli: Callable[..., tuple[int, str]], tmp_path: Path, usage: dict[str, int]) -> Any:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "spans.json"
    scope = {"scope": {"name": "t"}, "spans": [_span(usage)]}
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [scope]}]}), encoding="utf-8")
    db = str(tmp_path / "o.db")
    assert cli("--db", db, "import", str(path))[0] == 0
    (row,) = json.loads(cli("--db", db, "traces", "--json")[1])
    code, out = cli("--db", db, "context", row["id"], "--call", "0", "--json")
    assert code == 0
    return json.loads(out)


@pytest.mark.parametrize(
    ("usage", "prompt"),
    [
        # the conventions: the cache figures are part of input_tokens
        (
            {
                "gen_ai.usage.input_tokens": 10_000,
                "gen_ai.usage.output_tokens": 100,
                "gen_ai.usage.cache_read.input_tokens": 9_000,
                "gen_ai.usage.cache_creation.input_tokens": 500,
            },
            10_000,
        ),
        # an emitter that counts them apart, as Anthropic's own usage does (older names)
        (
            {
                "gen_ai.usage.input_tokens": 500,
                "gen_ai.usage.output_tokens": 100,
                "gen_ai.usage.cache_read_input_tokens": 9_000,
                "gen_ai.usage.cache_creation_input_tokens": 500,
            },
            10_000,
        ),
    ],
)
def test_a_spans_cache_tokens_are_recorded_and_priced(
    cli: Callable[..., tuple[int, str]], tmp_path: Path, usage: dict[str, int], prompt: int
) -> None:
    data = _recorded(cli, tmp_path, usage)
    rec = data["recorded"]
    assert (rec["prompt_tokens"], rec["output_tokens"]) == (prompt, 100)
    assert (rec["cached_tokens"], rec["cache_creation_tokens"]) == (9_000, 500)
    plain = _recorded(
        cli,
        tmp_path / "plain",
        {"gen_ai.usage.input_tokens": prompt, "gen_ai.usage.output_tokens": 100},
    )
    # cache reads cost a tenth of fresh input: the cached call costs far less, and says
    # what the cache saved
    assert data["cost"]["usd"] < plain["cost"]["usd"] / 3
    assert data["cost"]["saved_usd"] > 0 and plain["cost"]["saved_usd"] == 0
