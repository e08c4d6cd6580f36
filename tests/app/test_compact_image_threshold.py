"""Issue 13: an import's compaction threshold counts the images of its context.

The tool's threshold (its auto-compact point, else the default share of the window) is a
prompt size, and a prompt holds the images' tokens; ctxlens' compactor counts text only
(images are image blocks, TOK-3). So ``ctxlens compact`` lowers the threshold by the
images' estimate (``core/tokens/image_tokens.py``) beside what the transcript lacks, on
the real traces with images: the Inspect image log (gpt-4o, OpenAI's tile rule) and a
Claude Code session with a pasted screenshot (Anthropic's rule)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import TRACES

WITH_IMAGES = [
    TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log/log_images_tc.json",
    TRACES / "claude_code/iansherr__claude-code-log/test/test_data/real_projects/"
    "-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl",
]
Cli = Callable[..., tuple[int, str]]


@pytest.mark.parametrize("path", WITH_IMAGES, ids=lambda p: p.name)
def test_the_threshold_leaves_room_for_the_images(cli: Cli, tmp_path: Path, path: Path) -> None:
    if not path.is_file():
        pytest.skip("shared traces not present")
    db = str(tmp_path / "s.db")
    code, out = cli("--db", db, "import", str(path), "--json")
    assert code == 0
    (row,) = json.loads(out)
    ctx = json.loads(cli("--db", db, "context", row["trace_id"], "--json")[1])
    images = ctx["images"]["estimated_tokens"]
    assert images > 0 and ctx["images"]["unknown"] == 0
    code, out = cli("--db", db, "compact", row["trace_id"], "--level", "auto", "--json")
    data = json.loads(out)
    limits = data["limits"]
    assert code == 0 and limits["images_estimated"] == images
    gap = (ctx.get("carried_from") or {}).get("tokens", 0)
    assert limits["not_in_transcript"] == max(gap, 0)
    limit = limits["threshold"]["tokens"] - limits["not_in_transcript"] - images
    assert data["limit_tokens"] == limit
    assert data["reason"] == (
        f"the context's {data['before']['tokens']:,} tokens are within the {limit:,}-token "
        "threshold"
    )
    code, text = cli("--db", db, "compact", row["trace_id"], "--level", "auto")
    assert f", {images:,} in images (estimated)" in text.splitlines()[1]
    assert text.splitlines()[0].endswith(f"({data['reason']})")


def test_a_forced_low_threshold_compacts_where_the_images_tip_it(cli: Cli, tmp_path: Path) -> None:
    """With a threshold between the text and the text plus the images, the dry run
    compacts: without the images' estimate it would say ``not_needed``."""
    path = WITH_IMAGES[1]
    if not path.is_file():
        pytest.skip("shared traces not present")
    db = str(tmp_path / "s.db")
    (row,) = json.loads(cli("--db", db, "import", str(path), "--json")[1])
    data = json.loads(cli("--db", db, "compact", row["trace_id"], "--level", "auto", "--json")[1])
    text_tokens, gap = data["before"]["tokens"], data["limits"]["not_in_transcript"]
    images = data["limits"]["images_estimated"]
    window = data["limits"]["window"]["tokens"]
    between = (text_tokens + gap + images // 2) / window  # over with images, under without
    code, out = cli(
        "--db", db, "compact", row["trace_id"], "--level", "auto", "--threshold",
        f"{between:.6f}", "--json",
    )  # fmt: skip
    forced = json.loads(out)
    assert code == 0 and forced["limits"]["images_estimated"] == images
    assert forced["status"] != "not_needed", forced["reason"]
