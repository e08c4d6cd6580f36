"""Review 13a in the window: the Budget pane and the playback strip say what was recorded,
what ctxlens counted and what is estimated or unknown, and agree with the Context pane.

Every expected number is read from the raw trace file with plain ``json`` (or from the demo
store's ``llm_calls`` with plain ``sqlite3``), never from the code under test:
1. during playback the Budget pane measures the call's recorded prompt (input + cache reads
   + cache writes of Claude Code; Codex's ``last_token_usage.input_tokens``), with the part
   the transcript lacks drawn, as the Context pane beside it does;
2. a sum over calls that recorded no output says "— out", never "0 out"; SWE-agent's
   ``model_stats`` run totals are shown as the trace's recorded totals;
3. the recorded usage wins over ctxlens's own count, and each says which it is;
4. the next call of an import is an estimate and keeps its "≈";
5. the auto-compact point is where compaction fired: "auto-compact fired at", "≤ N left";
   at a call before it fired, "auto-compact fired later, at";
6. with the window unknown the bar is not drawn full.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QFontMetrics

from core.importers.api import import_paths
from core.store import Store
from tests.app.test_imported_free_space import SESSION
from tests.conftest import TRACES
from tests.core.importers.test_imported_calls import cc_prompts, codex_prompts, codex_window
from tests.helpers.raw_usage import calls_before_auto_compaction, pre_tokens
from tests.helpers.shared_demo import demo_copy
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.settings import AppSettings
from ui.theme import COMPONENT_COLORS

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")

CODEX = next(iter(sorted((TRACES / "codex").rglob("rollout-2025-09-24*.jsonl"))), None)
SWE = TRACES / "swe_agent/SWE-agent__SWE-agent"
MARSHMALLOW = next(iter(sorted(SWE.rglob("marshmallow-code__marshmallow-1867.traj"))), None)
PYDICOM = next(iter(sorted(SWE.rglob("pydicom__pydicom-1458.traj"))), None)
OTEL = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"


def window_on(qtbot: Any, settings: AppSettings, tmp_path: Path, path: Path) -> MainWindow:
    """The window on a store that holds ``path`` imported, indexed for playback."""
    db = tmp_path / "import.db"
    with Store.open(db) as s:
        import_paths(s, [path])
    return open_indexed(qtbot, settings, db)


def open_indexed(qtbot: Any, settings: AppSettings, db: Path) -> MainWindow:
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    win.show()
    assert win.open_store(db)
    settle(qtbot, win)
    qtbot.waitUntil(lambda: win.replay.playback.frames is not None, timeout=30_000)
    return win


def seek(qtbot: Any, win: MainWindow, position: int) -> None:
    """Scrub to call ``position`` as the slider does, and wait for every pane."""
    pb = win.replay.playback
    pb.seek_call(position)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.position == position,
                    timeout=30_000)  # fmt: skip
    settle(qtbot, win)


def strip(win: MainWindow) -> str:
    return win.replay.bar.label.text()


def limit_rows(win: MainWindow) -> dict[str, tuple[str, str]]:
    grid = win.budget.grid
    out = {}
    for row in range(grid.rowCount()):
        cells = [grid.itemAtPosition(row, c) for c in range(3)]
        texts = [c.widget().text() if c is not None else "" for c in cells]
        if texts[0]:
            out[texts[0]] = (texts[1], texts[2])
    return out


# -- finding 1 (and 5): the playback Budget pane measures the recorded prompt ---------------
def test_playback_budget_shows_the_recorded_prompt_like_the_context_pane(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    win = window_on(qtbot, settings, tmp_path, SESSION)
    prompt = cc_prompts([str(SESSION)])[101]  # input + cache read + cache creation
    fired = pre_tokens(SESSION)
    seek(qtbot, win, 101)
    ctx = win.context
    qtbot.waitUntil(lambda: ctx.report is not None and ctx.report.call_index == 101,
                    timeout=30_000)  # fmt: skip
    rep = ctx.report
    window = rep.budget.window
    assert window is not None
    budget = win.budget
    # it read "As of call 101: context 109,997 tokens — ok … 90,003 left": the transcript
    assert budget.bar.total == rep.prompt_tokens == prompt
    assert budget.bar.free_space() == ctx.bar.free_space() == window - prompt
    gap = prompt - rep.total
    assert gap > 0 and dict(budget.bar.parts)["not_in_transcript"] == gap
    assert dict(budget.bar.parts) == dict(ctx.bar.parts)
    text = budget.status.text()
    assert (
        f"As of call 101: <b>{prompt:,}</b> tokens, the recorded prompt "
        f"({rep.total:,} counted in the transcript) — <b>near window</b>"
    ) in text
    assert f"This call: {prompt:,} in (recorded) / " in text
    # finding 5: where compaction fired, not a limit known exactly; call 101 was made
    # before the tool's compaction fired, so it fired "later"
    after = calls_before_auto_compaction(SESSION)
    assert after > 101
    rows = limit_rows(win)
    assert rows["auto-compact fired later, at"] == (
        f"{fired:,} tokens",
        f"≤ {fired - prompt:,} left",
    )
    assert rows["window"] == (f"{window:,} tokens", f"{window - prompt:,} left")
    assert "auto-compact point" not in rows and "auto-compact fired at" not in rows
    for bar in (budget.bar, ctx.bar):
        assert f"auto-compact fired later, at {fired:,}" in bar.marker_labels()
    assert f"{prompt:,} tokens in (recorded)" in strip(win)
    # the first main call after it (after the compaction summarizer's own calls, which
    # Claude Code logs in the session's agent-acompact-* file): "fired at", in both panes
    summarizer = sorted((SESSION.parent / SESSION.stem / "subagents").glob("agent-acompact-*"))
    first = after + len(cc_prompts([str(f) for f in summarizer]))
    seek(qtbot, win, first)
    qtbot.waitUntil(lambda: ctx.report is not None and ctx.report.call_index == first,
                    timeout=30_000)  # fmt: skip
    prompt = cc_prompts([str(SESSION)])[after]
    assert limit_rows(win)["auto-compact fired at"] == (
        f"{fired:,} tokens",
        f"≤ {fired - prompt:,} left",
    )
    assert "auto-compact fired later, at" not in limit_rows(win)
    for bar in (budget.bar, ctx.bar):
        assert f"auto-compact fired at {fired:,}" in bar.marker_labels()
    assert win.last_error is None


@pytest.mark.skipif(CODEX is None, reason="the shared Codex rollout is not there")
def test_playback_budget_of_a_codex_call_is_its_recorded_input(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    assert CODEX is not None
    win = window_on(qtbot, settings, tmp_path, CODEX)
    prompt = codex_prompts(CODEX)[4]  # last_token_usage.input_tokens
    window = codex_window(CODEX)
    seek(qtbot, win, 4)
    text = win.budget.status.text()
    # it read "context 3,148 … 268,852 left" above "This call: 6,444 in"
    assert f"As of call 4: <b>{prompt:,}</b> tokens, the recorded prompt" in text
    assert f"This call: {prompt:,} in (recorded)" in text
    assert win.budget.bar.free_space() == window - prompt
    assert limit_rows(win)["window"] == (f"{window:,} tokens", f"{window - prompt:,} left")
    assert win.last_error is None


# -- finding 2: unknown output is not 0; run totals are the trace's --------------------------
@pytest.mark.skipif(MARSHMALLOW is None, reason="the shared SWE-agent replay is not there")
def test_a_sum_of_unknown_outputs_is_not_zero(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    assert MARSHMALLOW is not None
    raw = json.loads(MARSHMALLOW.read_text(encoding="utf-8"))
    stats = raw["info"]["model_stats"]
    assert stats["tokens_received"] == 0 < stats["api_calls"], "a replay counts nothing"
    win = window_on(qtbot, settings, tmp_path, MARSHMALLOW)
    frames = win.replay.playback.frames
    assert frames is not None
    last = frames.stops[-1]
    seek(qtbot, win, last)
    for text in (strip(win), win.budget.status.text()):
        assert "0 out" not in text
        assert "in (counted) / — out" in text
    assert "run totals" not in win.budget.status.text().lower(), "its zeros are not totals"
    assert win.last_error is None


@pytest.mark.skipif(PYDICOM is None, reason="the shared SWE-agent trajectory is not there")
def test_run_totals_of_a_swe_agent_trajectory_are_shown_as_recorded(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    assert PYDICOM is not None
    stats = json.loads(PYDICOM.read_text(encoding="utf-8"))["info"]["model_stats"]
    totals = (
        f"{stats['tokens_sent']:,} in / {stats['tokens_received']:,} out over "
        f"{stats['api_calls']} calls (SWE-agent info.model_stats)"
    )
    win = window_on(qtbot, settings, tmp_path, PYDICOM)
    seek(qtbot, win, 5)
    assert f"run totals recorded by the trace: {totals}" in strip(win)
    text = win.budget.status.text()
    assert f"Run totals recorded by the trace: {totals}" in text
    assert "in (counted) / — out" in text and "0 out" not in text
    assert "token usage per call" in win.replay.bar.notes.text()
    assert win.last_error is None


# -- finding 3: the record wins over ctxlens's count, each named ----------------------------
@pytest.fixture
def demo(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> tuple[Path, str]:
    return demo_copy(tmp_path_factory, tmp_path / "demo")


def test_a_demo_call_shows_its_recorded_prompt_and_ctxlens_count_named(
    qtbot: Any, settings: AppSettings, demo: tuple[Path, str]
) -> None:
    db, trace_id = demo
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT call_index, agent_name, json_extract(usage, '$.prompt_tokens'),"
        " json_extract(usage, '$.completion_tokens'), json_extract(params, '$.input_tokens')"
        " FROM llm_calls WHERE trace_id = ? ORDER BY call_index",
        (trace_id,),
    ).fetchall()
    con.close()
    pick = next(r for r in rows if r[1] == "main" and r[0] > 10 and r[2] != r[4])
    n, _, recorded, _, counted = pick
    so_far_in = sum(r[2] for r in rows[: n + 1])
    so_far_out = sum(r[3] for r in rows[: n + 1])
    win = open_indexed(qtbot, settings, db)
    seek(qtbot, win, n)
    # it read "6,646 tokens in" and "This call: 6,646 in" (ctxlens's count) beside the call
    # box's recorded "6,587 prompt tok", and "so far" summed the counts too
    assert f"· {recorded:,} tokens in (recorded)" in strip(win)
    assert f"so far {so_far_in:,} in / {so_far_out:,} out (recorded)" in strip(win)
    text = win.budget.status.text()
    assert f"This call: {recorded:,} in (recorded; {counted:,} counted)" in text
    assert f"so far: {so_far_in:,} in / {so_far_out:,} out (recorded)" in text
    assert f"{recorded:,} prompt tok" in win.context.calls.currentText()
    assert win.last_error is None


# -- finding 4: the next call of an import is an estimate ------------------------------------
@pytest.mark.parametrize("name", ["claude_code", "codex", "otel"])
def test_the_next_call_of_an_import_keeps_its_approx_sign(
    qtbot: Any, settings: AppSettings, tmp_path: Path, name: str
) -> None:
    path = {"claude_code": SESSION, "codex": CODEX, "otel": OTEL}[name]
    if path is None or not path.is_file():
        pytest.skip(f"the shared {name} trace is not there")
    win = window_on(qtbot, settings, tmp_path, path)
    ctx = win.context
    qtbot.waitUntil(lambda: ctx.report is not None and ctx.report.carried is not None,
                    timeout=30_000)  # fmt: skip
    rep = ctx.report
    gap = rep.carried
    prompt = rep.total + gap.tokens  # counted now + the part measured at the last call
    assert rep.prompt_tokens == prompt and gap.tokens > 0
    # it read "prompt 77,406 (39% …)" and "Current context: 77,406 tokens (…)" without ≈
    assert f", prompt ≈ {prompt:,}: " in ctx.summary.text()
    qtbot.waitUntil(lambda: f"≈ <b>{prompt:,}</b> tokens, estimated" in win.budget.status.text(),
                    timeout=30_000)  # fmt: skip
    assert win.budget.status.text().startswith("Current context: ≈ ")
    window = rep.budget.window
    assert window is not None
    for bar in (win.budget.bar, ctx.bar):
        assert bar.free_text() == f"free space ≈{window - prompt:,}"
    assert limit_rows(win)["window"][1] == f"≈{window - prompt:,} left"
    assert win.last_error is None


# -- finding 6: an unknown window is not a full bar -------------------------------------------
@pytest.mark.skipif(PYDICOM is None, reason="the shared SWE-agent trajectory is not there")
def test_a_bar_without_a_window_is_not_drawn_full(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    assert PYDICOM is not None
    win = window_on(qtbot, settings, tmp_path, PYDICOM)
    qtbot.waitUntil(lambda: "window unknown" in win.budget.status.text(), timeout=30_000)
    win.docks["budget"].raise_()
    seek(qtbot, win, 5)
    colours = {QColor(c).rgb() for c in COMPONENT_COLORS.values()}
    for bar in (win.budget.bar, win.context.bar):
        assert bar.budget.window is None and bar.free_space() is None
        # it filled the whole width (the scale was the total), which reads as "full"
        fm = QFontMetrics(bar.font())
        area = QRect(6, 2 * fm.height() + 6, bar.width() - 12, 22)
        right = max(r.right() for _, r in bar.segment_rects(area))
        assert right < area.left() + 0.7 * area.width()
        image = bar.grab().toImage()
        y = area.top() + area.height() // 2
        tail = {image.pixel(x, y) for x in range(int(right) + 4, area.right() - 2, 3)}
        assert not tail & colours, "no component colour past the segments"
        assert len(tail) > 1, "the rest is hatched, not one flat colour"
        assert bar.free_text() == "window unknown"
    assert win.last_error is None


CHAT = next(TRACES.glob("chat_messages/*/tests/fixtures/llm_data/fncall-llm-message.json"), None)


@pytest.mark.skipif(CHAT is None, reason="the shared chat-messages fixture is not there")
def test_a_call_derived_from_a_reply_is_compared_with_the_next(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: a chat file records no calls; the playback derives one per
    assistant reply, and at "call 3 of 0–5" the Context pane said "No following call to
    compare with." It compares the View at the call's head with the next derived call's:
    what entered is the reply and its tool result (read from the raw file); the last call
    is compared with the next call."""
    assert CHAT is not None
    raw = json.loads(CHAT.read_text(encoding="utf-8"))
    replies = [n for n, m in enumerate(raw) if m["role"] == "assistant"]
    win = window_on(qtbot, settings, tmp_path, CHAT)
    ctx = win.context
    seek(qtbot, win, 3)
    qtbot.waitUntil(lambda: ctx.diff is not None, timeout=30_000)
    diff = ctx.diff
    assert diff is not None
    assert [r.sequence for r in diff.entered] == list(range(replies[3], replies[4]))
    assert not diff.left and diff.kept == replies[3]
    assert ctx.diff_label.text().startswith("call 3 → call 4: 2 entered")
    last = len(replies) - 1
    seek(qtbot, win, last)
    qtbot.waitUntil(lambda: ctx.diff is not None and ctx.diff.before_label == f"call {last}",
                    timeout=30_000)  # fmt: skip
    assert ctx.diff.after_label == "next call"
    assert [r.sequence for r in ctx.diff.entered] == list(range(replies[last], len(raw)))
    assert win.last_error is None


PYDANTIC = next(TRACES.glob("otel_genai/*/worker/src/__tests__/chatml/framework-traces/"
                            "pydantic-ai-tools-2025-12-04.trace.json"), None)  # fmt: skip


@pytest.mark.skipif(PYDANTIC is None, reason="the shared pydantic-ai trace is not there")
def test_calls_are_compared_within_one_agent(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: on the latest state the Context pane compared the next call, the
    main agent's, with the last call of the trace, a subagent's ("call 3 (subagent
    evaluator_agent) → next call: 9 entered, 2 left, 0 kept": contexts that never met). The
    next call follows the main agent's last call, and a call is compared with its own
    agent's next one. The raw trace names two agents."""
    import re

    from core.agents import is_main_agent

    assert PYDANTIC is not None
    raw = PYDANTIC.read_text(encoding="utf-8")
    agents = set(re.findall(r'"gen_ai\.agent\.name": "([^"]+)"', raw))
    assert len(agents) == 2
    win = window_on(qtbot, settings, tmp_path, PYDANTIC)
    with Store.open(tmp_path / "import.db") as s, s.read() as r:
        calls = r.llm_calls(win.session.trace_id)
    assert {c.agent_name for c in calls} == agents and not is_main_agent(calls[-1])
    last_main = max(c.call_index for c in calls if is_main_agent(c))
    ctx = win.context
    qtbot.waitUntil(lambda: ctx.diff is not None, timeout=30_000)
    assert ctx.diff.before_label == f"call {last_main}" and ctx.diff.after_label == "next call"
    assert "subagent" not in ctx.diff_label.text()
    by_index = {c.call_index: c for c in calls}
    for c in calls:  # every call's comparison stays within its agent
        ctx.select_call(c.call_index)
        shown = lambda c=c: ctx.report is not None and ctx.report.call_index == c.call_index  # noqa: E731
        qtbot.waitUntil(shown, timeout=30_000)
        settle(qtbot, win)
        diff = ctx.diff
        if diff is None:
            assert "same agent" in ctx.diff_label.text()
            continue
        number = re.match(r"call (\d+)", diff.after_label)
        if number is not None:
            other = by_index[int(number.group(1))]
            assert (other.agent_name, other.branch_type) == (c.agent_name, c.branch_type)
        else:
            assert c.call_index == last_main
    assert win.last_error is None


def test_the_budget_pane_is_never_cut_in_a_short_dock(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: at 1280×720, during playback of a SWE-agent run, the Budget pane's
    last line ("… input tokens per call are counted by ctxlens") was cut in half. A dock
    shorter than the figures scrolls; every line of the status is whole."""
    from tests.app.test_swe_agent_calls_real import PYDICOM

    if not PYDICOM.is_file():
        pytest.skip("the shared SWE-agent trajectory is not there")
    win = window_on(qtbot, settings, tmp_path, PYDICOM)
    win.resize(1280, 720)
    settle(qtbot, win)
    seek(qtbot, win, 6)
    budget = win.budget
    status = budget.status
    assert "counted by ctxlens" in status.text()
    assert status.height() >= status.heightForWidth(status.width()), "the status is cut"
    inner = budget.area.widget()
    assert inner.height() >= inner.minimumSizeHint().height()
    assert budget.area.viewport().height() < inner.height(), "it scrolls in this dock"
    assert win.size().width() == 1280 and win.last_error is None
