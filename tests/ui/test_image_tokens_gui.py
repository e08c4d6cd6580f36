"""Issue 13, finding 1 in the window: a call of a real Claude Code session with a pasted image
draws the image's estimated tokens as their own part, ``images (estimated)``, and the gap
to the recorded prompt is labelled only with what the transcript cannot show."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from core.importers.api import import_paths
from core.store import Store
from core.tokens.image_tokens import anthropic_image_tokens
from tests.app.test_image_tokens_real import GAP, SESSION, claude_images
from tests.ui.conftest import open_window
from ui.settings import AppSettings

pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared traces not present")


def test_context_pane_draws_the_image_estimate(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    (size,) = claude_images(SESSION)
    image = anthropic_image_tokens(*size)
    db = tmp_path / "cc.db"
    with Store.open(db) as s:
        (res,) = import_paths(s, [SESSION])
    with Store.open(db) as s, s.read() as r:
        calls = [c for c in r.llm_calls(res.trace_id) if c.agent_name == "main"]
    win = open_window(qtbot, settings, db, (1400, 900))
    pane = win.context
    pick = calls[-1]
    pane.select_call(pick.call_index)
    qtbot.waitUntil(
        lambda: pane.report is not None and pane.report.call_index == pick.call_index,
        timeout=30_000,
    )
    rep = pane.report
    assert rep is not None and rep.recorded is not None and rep.images is not None
    parts = dict(pane.bar.parts)
    assert parts["images_estimated"] == image
    missing = rep.recorded.prompt_tokens - rep.total - image
    assert parts["not_in_transcript"] == missing == rep.unexplained
    assert sum(parts.values()) == rep.recorded.prompt_tokens
    text = pane.summary.text()
    assert f"1 image ≈ {image:,} tokens (estimated, Anthropic" in text
    assert f"{missing:,} {GAP}" in text
    assert "images (estimated)" in pane.bar.toolTip()
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.grab().save(str(Path(shots) / "image_tokens.png"))
