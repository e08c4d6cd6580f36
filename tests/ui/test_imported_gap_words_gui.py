"""Review 13b, finding 2, in the window: the Context pane on a call of the Inspect
popularity eval says what its few unexplained tokens are (message framing, or a tokenizer
difference), not "system prompt, tool definitions and other parts the tool did not log",
since its system message is in the context and counted and the model event recorded no
tools. Expected values come from the raw ``.eval`` (plain ``json``)."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.settings import AppSettings

EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*popularity*.eval"))), None)
pytestmark = pytest.mark.skipif(EVAL is None, reason="shared/traces not present")


def test_context_pane_calls_a_small_gap_message_framing(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    assert EVAL is not None
    with zipfile.ZipFile(EVAL) as z:
        sample = json.loads(z.read("samples/10_epoch_1.json"))
    (model,) = [e for e in sample["events"] if e["event"] == "model"]
    assert model["input"][0]["role"] == "system" and model["tools"] == []
    recorded = model["output"]["usage"]["input_tokens"]
    db = tmp_path / "ev.db"
    assert cli("--db", str(db), "import", str(EVAL), "--json")[0] == 0
    rows = json.loads(cli("--db", str(db), "traces", "--json")[1])
    (trace,) = [r for r in rows if r["sample"]["id"] == sample["id"]]
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    assert win.open_store(db, trace["id"])
    settle(qtbot, win)
    pane = win.context
    pane.select_call(0)
    qtbot.waitUntil(lambda: pane.report is not None and pane.report.call_index == 0, timeout=30_000)
    rep = pane.report
    assert rep is not None and rep.recorded is not None
    assert rep.recorded.prompt_tokens == recorded
    assert rep.by_component["system"] > 0, "the system prompt is in the context, counted"
    gap = recorded - rep.total
    assert 0 < gap <= 3 * len(model["input"]) + 3
    text = pane.summary.text()
    assert f"recorded prompt <b>{recorded:,}</b>" in text
    assert (
        f"{gap:,} not in the transcript (message framing: the tokens the provider adds around "
        "each message, or a tokenizer difference)"
    ) in text
    assert "system prompt" not in text and "tool definitions" not in text
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.grab().save(str(Path(shots) / "inspect_gap_words.png"))
    assert win.last_error is None
