"""Screenshot review (h13c), findings 2 and 3, in the window on the real spotter Claude Code
session: a call the main agent did not make is labelled by who made it (its compaction
summarizer, its ``claude-code-guide`` subagent) in the call box and in the report; counts
read "1 item", a diff that removed nothing says "0 left" (not "0 left (−0 tok)"), the share
of the window nests no parenthesis in another, and the scrubber says "an imported
boundary".

Expectations come from the raw files: the subagent files' API responses (distinct message
ids) and the ``subagent_type`` the session's Task call named."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from core.store import Store
from tests.conftest import TRACES
from tests.ui.test_imported_context_gui import SESSION, _window_on
from ui.settings import AppSettings

pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="the shared session is not there")
SUBAGENTS = SESSION.with_suffix("") / "subagents"


def _responses(path: Path) -> int:
    """API responses in a transcript: distinct message ids of its assistant records."""
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "assistant":
            ids.add(rec["message"]["id"])
    return len(ids)


def _subagent_type() -> str:
    (name,) = set(re.findall(r'"subagent_type":"([^"]+)"', SESSION.read_text(encoding="utf-8")))
    return name


def test_call_box_names_the_calls_the_main_agent_did_not_make(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    assert TRACES.is_dir()
    db = tmp_path / "cc.db"
    res, win = _window_on(qtbot, settings, db, SESSION, size=(1600, 1000))
    box = win.context.calls
    qtbot.waitUntil(lambda: box.count() > 1, timeout=30_000)
    labels = {box.itemData(i): box.itemText(i) for i in range(1, box.count())}
    compaction = [k for k, v in labels.items() if "— compaction summarizer, " in v]
    subagent = [k for k, v in labels.items() if f"— subagent {_subagent_type()}, " in v]
    assert len(compaction) == _responses(next(SUBAGENTS.glob("agent-acompact-*.jsonl")))
    assert len(subagent) == _responses(SUBAGENTS / "agent-a881341.jsonl")
    with Store.open(db) as s, s.read() as r:
        calls = {c.call_index: c for c in r.llm_calls(res.trace_id)}
    for k, text in labels.items():
        call = calls[k]
        named = k in compaction or k in subagent
        assert named == (call.agent_name != "main"), text
        n = len(call.context)
        # "Call 0 of 0–155 — claude-opus-4-6, 1 items, …" read "1 items"
        assert f", {n:,} item{'s' if n != 1 else ''}," in text, text
        assert not re.search(r"\b1 items", text), text
    assert any(len(c.context) == 1 for c in calls.values()), "the first call sends one item"

    # the compaction summarizer's report names it too (it read like a main call)
    (k,) = compaction
    win.context.select_call(k)
    qtbot.waitUntil(
        lambda: win.context.report is not None and win.context.report.call_index == k,
        timeout=30_000,
    )
    text = win.context.summary.text()
    assert text.startswith("<b>call ") and " — compaction summarizer</b>: " in text, text
    first = text.split(" · ")[0]
    # "(39% of 200,000 (model table) window; ok)": one parenthesis inside another
    assert "-token window (model table)" in first, first
    assert not re.search(r"\([^)]*\(", first), first
    assert not re.search(r"\b1 items", text), text


def test_counts_diffs_and_boundaries_read_right(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    res, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=(1600, 1000))
    pane = win.context
    with Store.open(tmp_path / "cc.db") as s, s.read() as r:
        first = r.llm_call(res.trace_id, 0)
    assert len(first.context) == 1
    pane.select_call(0)
    qtbot.waitUntil(lambda: pane.report is not None and pane.report.call_index == 0, timeout=30_000)
    qtbot.waitUntil(lambda: pane.diff is not None, timeout=30_000)
    assert "<b>call 0 of 0–" in pane.summary.text()
    assert "</b>: 1 item, " in pane.summary.text(), pane.summary.text()
    diff, label = pane.diff, pane.diff_label.text()
    assert diff is not None and not diff.left, "call 0 → call 1 removes nothing"
    assert ", 0 left, " in label and "−0" not in label, label
    assert f"{len(diff.entered)} entered (+{diff.tokens_entered:,} tok)" in label, label

    # the scrubber at the last main call: the session's compaction is "an imported" one
    bar = win.replay.playback
    qtbot.waitUntil(lambda: bar.frames is not None, timeout=30_000)
    assert bar.frames is not None
    last = len(bar.frames.stops) - 1
    bar.scrub(last)
    qtbot.waitUntil(lambda: bar.frame is not None and bar.frame.stop == last, timeout=30_000)
    detail = bar.frame.detail
    assert "context starts from an imported boundary" in detail, detail
    assert " a imported " not in win.replay.bar.label.text()
    assert win.last_error is None
