"""Issue 13, finding 1: images in real imported traces get an estimated token part of their
own, and the gap to the recorded prompt claims only what the transcript cannot show.

Expected sizes come from the raw files (plain ``json`` and ``base64``: the PNG's IHDR), and
the recorded prompts from the raw usage records."""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.tokens.image_tokens import anthropic_image_tokens, openai_image_tokens
from tests.conftest import TRACES

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")

CC_LOG = TRACES / "claude_code/iansherr__claude-code-log/test/test_data"
DEBUG_IMAGES = CC_LOG / "debug_image_message.jsonl"
SESSION = (
    CC_LOG / "real_projects/-Users-dain-workspace-claude-code-log-sample"
    / "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"
)  # fmt: skip
INSPECT = (
    TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log"
    / "log_images_tc.json"
)  # fmt: skip
Cli = Callable[..., tuple[int, str]]
GAP = "not in the transcript (system prompt, tool definitions and other parts the tool did not log)"


def png_size(b64: str) -> tuple[int, int]:
    data = base64.b64decode(b64.partition(",")[2] if b64.startswith("data:") else b64)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def claude_images(path: Path) -> list[tuple[int, int]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        content = (rec.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "image":
                out.append(png_size(block["source"]["data"]))
    return out


def imported(cli: Cli, tmp_path: Path, path: Path) -> tuple[str, str]:
    db = str(tmp_path / "s.db")
    code, _ = cli("--db", db, "import", str(path))
    assert code == 0
    return db, json.loads(cli("--db", db, "traces", "--json")[1])[0]["id"]


def context(cli: Cli, db: str, trace_id: str, *more: str) -> dict[str, Any]:
    code, out = cli("--db", db, "context", trace_id, "--json", *more)
    assert code == 0
    return dict(json.loads(out))


def test_pasted_images_without_a_call_are_estimated_not_zero(cli: Cli, tmp_path: Path) -> None:
    sizes = claude_images(DEBUG_IMAGES)
    assert len(sizes) == 2
    db, trace_id = imported(cli, tmp_path, DEBUG_IMAGES)
    data = context(cli, db, trace_id)
    expected = sum(anthropic_image_tokens(w, h) for w, h in sizes)
    assert data["image_tokens_estimated"] == expected > 2000
    assert data["images"]["images"] == 2 and data["images"]["unknown"] == 0
    assert data["prompt_tokens"] == data["reconstructed_tokens"] + expected
    parts = {c["name"]: c for c in data["components"]}
    assert parts["images_estimated"] == {"name": "images_estimated", "tokens": expected,
                                         "estimated": True}  # fmt: skip
    code, text = cli("--db", db, "context", trace_id)
    assert code == 0 and f"2 images ≈ {expected:,} tokens (estimated, Anthropic" in text


def test_a_calls_gap_leaves_out_its_image(cli: Cli, tmp_path: Path) -> None:
    (size,) = claude_images(SESSION)
    image = anthropic_image_tokens(*size)
    db, trace_id = imported(cli, tmp_path, SESSION)
    calls = [context(cli, db, trace_id, "--call", str(n)) for n in range(15)]
    with_image = [c for c in calls if c["images"] is not None]
    assert with_image and len(with_image) < len(calls)  # the image is pasted mid-session
    for c in calls:
        images = c["image_tokens_estimated"] or 0
        assert images in (0, image)
        recorded = c["recorded"]["prompt_tokens"]
        assert c["unexplained_tokens"] == recorded - c["reconstructed_tokens"] - images
        assert c["prompt_tokens"] == recorded
    # Before the image and after it the gap is the same size (the system prompt and tools):
    # with the image counted in it, it would jump by the image's tokens.
    first = calls.index(with_image[0])
    jump = with_image[0]["unexplained_tokens"] - calls[first - 1]["unexplained_tokens"]
    assert abs(jump) < image / 4
    nxt = context(cli, db, trace_id)
    gap = nxt["carried_from"]
    assert gap["image_tokens_estimated"] == image
    assert gap["tokens"] == gap["recorded_prompt_tokens"] - gap["reconstructed_tokens"] - image
    code, text = cli("--db", db, "context", trace_id, "--call", str(first))
    assert code == 0 and f"{with_image[0]['unexplained_tokens']} {GAP}" in text


def test_inspect_image_follows_the_openai_rule(cli: Cli, tmp_path: Path) -> None:
    log = json.loads(INSPECT.read_text(encoding="utf-8"))
    (msg,) = [m for m in log["samples"][0]["messages"] if isinstance(m["content"], list)]
    (part,) = [p for p in msg["content"] if p["type"] == "image"]
    image = openai_image_tokens(*png_size(part["image"]))
    db, trace_id = imported(cli, tmp_path, INSPECT)
    call = context(cli, db, trace_id, "--call", "0")
    recorded = log["samples"][0]["output"]["usage"]["input_tokens"]
    assert call["recorded"]["prompt_tokens"] == recorded
    assert call["image_tokens_estimated"] == image == 255
    assert call["unexplained_tokens"] == recorded - call["reconstructed_tokens"] - image
    assert 0 <= call["unexplained_tokens"] < 20  # gpt-4o's few framing tokens, not an image
