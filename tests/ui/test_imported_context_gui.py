"""The context and budget panes on an imported Claude Code session (issue 13): the calls are
the session's real API responses, the window is the model's (not the runtime's 128k), no
runtime budget is drawn, and the recorded prompt beside the reconstruction shows the part
the transcript does not hold.

Expectations come from the raw file (plain ``json``): the prompt tokens of a message id are
its input plus cache reads plus cache writes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from core.importers.api import import_paths
from core.importers.base import ImportResult
from core.replay.playback import Playback
from core.store import Store
from tests.conftest import TRACES
from tests.helpers.playback import main_positions
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.settings import AppSettings

SESSION = (
    TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
    / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)  # fmt: skip


def _main_prompts(path: Path) -> list[int]:
    """Recorded prompt tokens per API response of the main session, in file order."""
    last: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "assistant" and rec["message"].get("model") != "<synthetic>":
            last[rec["message"]["id"]] = rec["message"]["usage"]
    return [
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        for u in last.values()
    ]


def _window_on(
    qtbot: Any,
    settings: AppSettings,
    db: Path,
    trace_file: Path,
    size: tuple[int, int] | None = None,
) -> tuple[ImportResult, MainWindow]:
    """``trace_file`` imported into a new store at ``db``, shown in a window once it has
    settled."""
    with Store.open(db) as s:
        (res,) = import_paths(s, [trace_file])
    win = MainWindow(settings)
    qtbot.addWidget(win)
    if size is not None:
        win.resize(*size)
    win.show()
    assert win.open_store(db, res.trace_id)
    settle(qtbot, win)
    return res, win


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared Claude Code session is not there")
def test_context_pane_shows_recorded_calls_of_an_import(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "cc.db"
    res, win = _window_on(qtbot, settings, db, SESSION, size=(1400, 900))
    pane = win.context
    with Store.open(db) as s, s.read() as r:
        calls = [c for c in r.llm_calls(res.trace_id) if c.agent_name == "main"]
    prompts = _main_prompts(SESSION)
    assert len(calls) == len(prompts)
    pick = calls[len(calls) // 2]
    pane.select_call(pick.call_index)
    qtbot.waitUntil(
        lambda: pane.report is not None and pane.report.call_index == pick.call_index,
        timeout=30_000,
    )
    rep = pane.report
    assert rep is not None and rep.recorded is not None
    assert rep.recorded.prompt_tokens == prompts[calls.index(pick)]
    missing = rep.recorded.prompt_tokens - rep.total
    assert missing > 0 and rep.unexplained == missing
    text = pane.summary.text()
    assert f"recorded prompt <b>{rep.recorded.prompt_tokens:,}</b>" in text
    assert f"{missing:,} not in the transcript" in text
    assert "200,000-token window (model table)" in text and "128,000" not in text
    # the share of the window is the prompt's, and says so (it read "95,452 tokens counted
    # (74% of 200,000 …)": 74 % was the recorded prompt's, not the counted tokens'); the
    # window is named without nesting parentheses (it read "(74% of 200,000 (model table)
    # window; ok)")
    share = round(100 * rep.prompt_tokens / 200_000)
    assert f"tokens counted, prompt {rep.prompt_tokens:,}: {share}% of the 200,000" in text
    parts = dict(pane.bar.parts)
    assert parts["not_in_transcript"] == missing
    names = [n for n, _ in pane.bar.budget.markers()]
    assert names == ["auto-compact point", "window"], "no runtime soft/hard budget"
    budget_text = win.budget.status.text()
    assert "no runtime budgets" in budget_text and "over hard" not in budget_text
    # the scrubber steps by the same recorded calls; a stop shows the call's recorded prompt
    with Store.open(db) as s, s.read() as r:
        pb = Playback.open(r, res.trace_id)
    assert len(pb) == res.llm_calls
    stop = main_positions(pb).index(pick.call_index)
    bar = win.replay.playback
    bar.scrub(stop)
    qtbot.waitUntil(lambda: bar.frame is not None and bar.frame.stop == stop, timeout=30_000)
    settle(qtbot, win)
    assert f"This call: {rep.recorded.prompt_tokens:,} in" in win.budget.status.text()
    assert "model calls" not in win.replay.bar.notes.text()
    shot = os.environ.get("CTXLENS_SCREENSHOT")
    if shot:  # docs/img/import-claude-code.png is taken this way
        pane.grab().save(shot)
    assert win.last_error is None


PYDICOM = next(iter(sorted((TRACES / "swe_agent").rglob("pydicom__pydicom-1458.traj"))), None)


@pytest.mark.skipif(PYDICOM is None, reason="the shared SWE-agent trajectory is not there")
def test_summary_of_a_trace_without_a_known_window(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """The window is said once, as unknown (it read "unknown window window; window unknown")."""
    assert PYDICOM is not None
    win = _window_on(qtbot, settings, tmp_path / "swe.db", PYDICOM)[1]
    qtbot.waitUntil(lambda: win.context.report is not None, timeout=30_000)
    rep = win.context.report
    assert rep is not None
    text = win.context.summary.text()
    assert "window window" not in text and "unknown window" not in text
    if rep.budget.window is None:
        assert text.count("window unknown") == 1
        qtbot.waitUntil(lambda: "no runtime budgets" in win.budget.status.text(), timeout=30_000)
        assert win.budget.status.text().count("window unknown") == 1, "said once there too"
    else:
        assert f"{rep.budget.window:,}" in text
    assert win.last_error is None


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared Claude Code session is not there")
def test_the_timeline_line_counts_one_band_in_the_singular(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """The session has one ``compact_boundary``: the line under the timeline said
    "1 compaction bands"."""
    assert SESSION.read_text(encoding="utf-8").count('"compact_boundary"') == 1
    win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION)[1]
    text = win.timeline.status.text()
    assert " messages on this path · 1 compaction band" in text, text
    assert "compaction bands" not in text, text


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared Claude Code session is not there")
def test_the_context_panes_figures_fit_its_default_dock(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: in the default ~340 px dock the Tokens column ran past the right
    edge ("Toker", "3,4") and the line "call 100 → call 101: 2 entered (+742 tok), 0 left,
    225 kept" was cut at "kep". The tokens now come before the component (in sight at any
    dock width this window allows) and the line wraps."""
    res, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=(1600, 1000))
    pane = win.context
    with Store.open(tmp_path / "cc.db") as s, s.read() as r:
        calls = [c for c in r.llm_calls(res.trace_id) if c.agent_name == "main"]
    pick = calls[len(calls) * 2 // 3]
    pane.select_call(pick.call_index)
    qtbot.waitUntil(
        lambda: (
            pane.report is not None
            and pane.report.call_index == pick.call_index
            and "→" in pane.diff_label.text()
        ),
        timeout=30_000,
    )
    dock = pane.parentWidget()
    while not isinstance(dock, QDockWidget):
        dock = dock.parentWidget()
    win.resizeDocks([dock], [340], Qt.Orientation.Horizontal)  # as the review saw it
    settle(qtbot, win)
    assert pane.width() <= 340
    for view in (pane.rows_view, pane.entered_view):
        pane.tables.setCurrentWidget(view)  # one table in sight at a time (tabs)
        settle(qtbot, win)
        model = view.model()
        col = next(
            c
            for c in range(model.columnCount())
            if model.headerData(c, Qt.Orientation.Horizontal) == "Tokens"
        )
        right = view.columnViewportPosition(col) + view.columnWidth(col)
        assert 0 < right <= view.viewport().width(), (right, view.viewport().width())
    label = pane.diff_label
    assert label.width() <= pane.width()
    assert label.height() >= label.heightForWidth(label.width()), "the whole line is shown"


NARROW_FACTS = 300


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared Claude Code session is not there")
def test_a_replys_facts_fit_the_message_pane(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: beside the message id the role read "assistan", and the usage
    ("cache_creation.ephemeral_1h_input_tokens …") ran past the pane's right edge. The
    facts' table now fits ``NARROW_FACTS`` (the facts' width in the dock at 1280×720)."""
    from tests.ui.conftest import show_message

    res, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=(1600, 1000))
    with Store.open(tmp_path / "cc.db") as s, s.read() as r:
        reply = next(
            m.sequence
            for m in r.all_messages(res.trace_id)
            if m.role == "assistant" and m.usage and "cache_creation" in m.usage
        )
    dock = win.detail.parentWidget()
    while not isinstance(dock, QDockWidget):
        dock = dock.parentWidget()
    win.resizeDocks([dock], [340], Qt.Orientation.Horizontal)
    pane = show_message(qtbot, win, reply)
    settle(qtbot, win)
    label = pane.facts
    assert "assistant" in label.text() and "ephemeral" in label.text()
    # the id is paired with its token count, not with the role it cut ("assistan")
    rows = label.text().split("<tr>")
    (id_row,) = [row for row in rows if re.search(r"color:[^']*'>message</td>", row)]
    assert ">counted<" in id_row and ">role<" not in id_row
    # no word of the usage is wider than its cell can be in a narrow dock (a word breaks
    # at the zero-width spaces after "_" and ".")
    (usage_row,) = [row for row in rows if re.search(r"color:[^']*'>usage</td>", row)]
    value = usage_row.split("colspan=")[1].split(">", 1)[1].split("</td>")[0]
    words = value.replace("\u200b", " ").split()
    widest = max(label.fontMetrics().horizontalAdvance(w) for w in words)
    key = label.fontMetrics().horizontalAdvance("usage") + 6
    assert key + widest <= NARROW_FACTS, (words, widest)


CODEX_VSCODE = (
    TRACES / "codex/jnarowski__agentcmd/packages/agent-cli-sdk/tests/fixtures/codex/full"
    / "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"
)  # fmt: skip


@pytest.mark.skipif(not CODEX_VSCODE.is_file(), reason="the shared Codex rollout is not there")
def test_a_codex_shell_output_reads_as_its_text(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: Codex writes a shell result as a JSON string ({"output": "     1\\t
    import …\\n…", "metadata": {…}}), which the Content tab showed re-indented, the output one
    line of escapes. It now shows the output's own lines under its field name, says so, and
    the Raw record tab keeps the stored content, the JSON string the model received."""
    from core.inspector.detail import FIELDS_NOTE
    from tests.ui.conftest import show_message

    res, win = _window_on(qtbot, settings, tmp_path / "cx.db", CODEX_VSCODE)
    with Store.open(tmp_path / "cx.db") as s, s.read() as r:
        tool = next(
            m
            for m in r.all_messages(res.trace_id)
            if m.role == "tool" and m.content.startswith('{"output":') and "\\n" in m.content
        )
    output = json.loads(tool.content)["output"]
    pane = show_message(qtbot, win, tool.sequence)
    body = pane.body.toPlainText()
    assert body.startswith(f"[{FIELDS_NOTE}]")
    assert f"output:\n{output}" in body, "the output's own lines, tabs and all"
    assert "\\n" not in body.split("output:\n", 1)[1].split("\n\nmetadata:")[0]
    assert json.loads(pane.raw.toPlainText())["content"] == tool.content, "as received"


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared Claude Code session is not there")
def test_an_import_without_skills_or_grants_brings_the_budget_forward(
    qtbot: Any, settings: AppSettings, tmp_path: Path, sample_path: Path
) -> None:
    """Screenshot review: every import opened on the Skills tab, "not recorded in this
    trace", a fifth of a 1280×720 window. A trace that records neither skills nor grants
    shows the Budget tab in front; a ctxlens run keeps its Skills tab."""

    def in_front(win: MainWindow, name: str) -> bool:
        return not win.docks[name].visibleRegion().isEmpty()

    from tests.ui.conftest import open_window

    win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=(1280, 720))[1]
    qtbot.waitUntil(lambda: in_front(win, "budget"), timeout=20_000)
    assert not in_front(win, "skills") and not in_front(win, "grants")
    assert "not recorded in this trace" in win.skills.table.empty_text
    run = open_window(qtbot, settings, sample_path, size=(1280, 720))
    qtbot.waitUntil(lambda: run.skills.model.rowCount() > 0, timeout=20_000)
    assert in_front(run, "skills") and not in_front(run, "budget")
