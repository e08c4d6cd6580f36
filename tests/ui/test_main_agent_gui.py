"""h13d in the window, on real imports and the demo run:

1. the main agent is the one on no side branch, whatever its name: an any-agent run re-run
   and compared finds its calls (the re-run was refused, the comparison found none), and
   the playback strip of a pydantic-ai run stops at its ``joke_agent``'s calls only (it
   stopped at every call, the ``evaluator_agent`` subagent's too, because no agent was
   named "main");
2. the comparison says of each call's input tokens whether the model recorded them or
   ctxlens counted them (rows, summary, chart);
3. the playback strip and the Context pane say where a call's context comes from in the
   same words ("context derived from the path" beside "context reconstructed from the
   transcript" for Claude Code call 101);
4. a call picked in the Context pane's box stays there when playback cannot stop at it
   (call 102, the spotter session's compaction summarizer, showed call 101).

Expectations come from the raw files (plain ``json``) and from the store."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from core.importers.api import import_paths
from core.inspector.rerun import RerunOutcome
from core.replay.compare import Comparison
from core.store import Store
from tests.app.test_main_agent_cli import (
    ANY_AGENT,
    NO_CALLS,
    PYDANTIC,
    any_agent_inputs,
    generations_by_agent,
)
from tests.helpers.shared_demo import demo_copy
from tests.ui.conftest import settle
from tests.ui.test_imported_context_gui import SESSION, _window_on
from tests.ui.test_replay_gui import open_window
from ui.main_window import MainWindow
from ui.settings import AppSettings

pytestmark = pytest.mark.skipif(
    not (ANY_AGENT.is_file() and PYDANTIC.is_file() and NO_CALLS.is_file() and SESSION.is_file()),
    reason="shared/traces not present",
)
SIZE = (1600, 1000)


def _shot(win: Any, name: str) -> None:
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.resize(*SIZE)
        win.grab().save(str(Path(shots) / name))


def _played(qtbot: Any, win: MainWindow) -> Any:
    pb = win.replay.playback
    qtbot.waitUntil(lambda: pb.frames is not None, timeout=30_000)
    return pb


def _scrub_to_call(qtbot: Any, win: MainWindow, position: int) -> Any:
    pb = _played(qtbot, win)
    stop = pb.frames.stops.index(position)
    pb.scrub(stop)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == stop, timeout=30_000)
    return pb.frame


def _report_of(qtbot: Any, win: MainWindow, call_index: int | None) -> Any:
    pane = win.context
    qtbot.waitUntil(
        lambda: pane.report is not None and pane.report.call_index == call_index, timeout=30_000
    )
    settle(qtbot, win)
    return pane.report


def _pick(qtbot: Any, box: QComboBox, data: Any) -> None:
    """Choose the item whose data is ``data`` as a user does with the keyboard: open the
    list, move down or up to the item, press Return (Qt sets the current item and emits
    ``activated``; a mouse click cannot be aimed offscreen, where the pointer never moves)."""
    i = box.findData(data)
    assert i >= 0, data
    box.showPopup()
    view = box.view()
    qtbot.waitUntil(view.isVisible, timeout=5_000)
    for _ in range(box.count()):
        row = view.currentIndex().row()
        if row == i:
            break
        qtbot.keyClick(view, Qt.Key.Key_Down if row < i else Qt.Key.Key_Up)
    assert view.currentIndex().row() == i
    with qtbot.waitSignal(box.activated, timeout=5_000):
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert box.currentIndex() == i and not view.isVisible()


# -- 1 and 2: an agent not named "main", re-run and compared -------------------------------
def test_an_any_agent_run_is_rerun_and_compared(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    inputs = any_agent_inputs()
    _, win = _window_on(qtbot, settings, tmp_path / "aa.db", ANY_AGENT, size=SIZE)
    ui = win.replay
    pb = _played(qtbot, win)
    assert len(pb.frames.stops) == len(inputs)
    assert f"{len(inputs)} main-agent calls to play back" in ui.bar.label.text()
    win.registry["run.rerun"].trigger()
    dialog = ui.rerun_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    # the calls a re-run can start from: every call of the run (it listed the start only)
    qtbot.waitUntil(lambda: dialog.start.count() == len(inputs), timeout=20_000)
    dialog.start.setCurrentIndex(dialog.start.findData(0))
    with qtbot.waitSignal(dialog.finished_run, timeout=120_000) as sig:
        dialog.run_button.click()
    outcome: RerunOutcome = sig.args[0]
    assert outcome.result is not None and outcome.result.diverged is None, outcome
    view = ui.compare_window
    assert view is not None
    qtbot.waitUntil(lambda: view.comparison is not None, timeout=30_000)
    cmp: Comparison = view.comparison  # type: ignore[assignment]
    assert cmp.summary["main_calls"] == {"a": 3, "b": 3}  # A (the import) had 0
    assert view.calls.rowCount() == 3
    assert view.status.text().startswith("3 main-agent calls aligned by order; ")
    # item 2: the import's inputs are its spans' recorded usage, and say so
    column = [view.calls.data(view.calls.index(k, 1)) for k in range(3)]
    assert column == [f"{n:,} (recorded)" for n in inputs]
    rows = {r.key: r for r in view.metrics.records}
    assert rows["input_tokens"].a == f"{sum(inputs):,} (recorded)"
    assert view.chart.legend_text("a") == "A (recorded)"
    qtbot.waitUntil(lambda: view.diff is not None, timeout=30_000)
    _shot(view, "compare-any-agent-rerun.png")
    view.close()
    settle(qtbot, win)


def test_the_comparison_labels_counted_inputs(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """A message list records no call: its inputs are counted, beside recorded ones, and
    a pair both sides made is not "only in" one of them (a derived call has no index)."""
    db = tmp_path / "two.db"
    with Store.open(db) as s:
        ra, rb = import_paths(s, [ANY_AGENT, NO_CALLS])
    replies = [
        m for m in json.loads(NO_CALLS.read_text(encoding="utf-8")) if m["role"] == "assistant"
    ]
    win = open_window(qtbot, settings, db, ra.trace_id)
    win.traces.select_ids([ra.trace_id, rb.trace_id])
    win.traces.compare_button.click()
    view = win.replay.compare_window
    assert view is not None
    qtbot.waitUntil(lambda: view.comparison is not None, timeout=30_000)
    cmp = view.comparison
    assert cmp is not None
    sides = {cmp.a.trace_id: "a", cmp.b.trace_id: "b"}
    rec, cnt = sides[ra.trace_id], sides[rb.trace_id]
    col = {"a": 1, "b": 2}
    n = max(3, len(replies))
    assert view.calls.rowCount() == n
    for k in range(n):
        recorded = view.calls.data(view.calls.index(k, col[rec]))
        counted = view.calls.data(view.calls.index(k, col[cnt]))
        assert recorded.endswith(" (recorded)") if k < 3 else recorded == "—"
        assert counted.endswith(" (counted)") if k < len(replies) else counted == "—"
        both = k < min(3, len(replies))
        assert (view.calls.data(view.calls.index(k, 4)) == f"only in {cnt.upper()}") == (not both)
    rows = {r.key: r for r in view.metrics.records}
    assert getattr(rows["input_tokens"], rec).endswith(" (recorded)")
    assert getattr(rows["input_tokens"], cnt).endswith(" (counted)")
    assert view.chart.legend_text(cnt) == f"{cnt.upper()} (counted)"
    view.select_call(0)
    qtbot.waitUntil(lambda: view.diff is not None and view.diff.k == 0, timeout=30_000)
    _shot(view, "compare-recorded-counted.png")
    view.close()
    settle(qtbot, win)


def test_the_strip_stops_at_the_main_agent_of_any_name(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    per_agent = generations_by_agent()
    _, win = _window_on(qtbot, settings, tmp_path / "p.db", PYDANTIC, size=SIZE)
    pb = _played(qtbot, win)
    calls = pb.frames.playback.calls
    assert len(calls) == sum(per_agent.values())
    stops = [calls[p].agent_name for p in pb.frames.stops]
    assert stops == ["joke_agent"] * per_agent["joke_agent"]  # the evaluator's was a stop
    assert f"{per_agent['joke_agent']} main-agent calls to play back" in win.replay.bar.label.text()
    frame = _scrub_to_call(qtbot, win, pb.frames.stops[-1])
    assert " · main · " in frame.label, frame.label
    settle(qtbot, win)
    _shot(win, "strip-pydantic-ai.png")


# -- 3: one wording for where a call's context comes from ----------------------------------
def _same_origin(qtbot: Any, win: MainWindow, position: int, expected: str) -> None:
    """Call ``position`` played back: the strip and the Context pane both say ``expected``
    (the visible words first; then that both read the one core answer)."""
    frame = _scrub_to_call(qtbot, win, position)
    report = _report_of(qtbot, win, frame.call_index)
    strip = html.unescape(win.replay.bar.label.text())
    summary = html.unescape(win.context.summary.text())
    assert "derived from the path" not in strip, strip
    assert expected in strip, strip
    assert expected in summary, summary
    assert frame.state.context_origin.text == expected
    assert report.origin == frame.state.context_origin


def test_both_panes_say_where_an_imported_call_context_comes_from(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Claude Code logs replies, never requests; any-agent's spans log their input."""
    _, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=SIZE)
    _same_origin(qtbot, win, 101, "context reconstructed from the transcript")
    _shot(win, "origin-claude-code-101.png")
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    calls = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "call_llm"]
    logged = ["gen_ai.input.messages" in s["attributes"] for s in calls]
    assert logged == [True, False, False]  # only the first span logs its input
    _, other = _window_on(qtbot, settings, tmp_path / "aa.db", ANY_AGENT, size=SIZE)
    _same_origin(qtbot, other, 0, "context recorded by the tool (the span's input messages)")
    _shot(other, "origin-any-agent-0.png")
    _same_origin(qtbot, other, 1, "context reconstructed from the transcript")


def test_both_panes_say_where_a_demo_call_context_comes_from(
    qtbot: Any, settings: AppSettings, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    win = open_window(qtbot, settings, db, source)
    _same_origin(
        qtbot, win, win.replay.playback.frames.stops[40],
        "context recorded by ctxlens's run (the request it sent)",
    )  # fmt: skip
    _shot(win, "origin-demo.png")


# -- 4: a call playback does not stop at, picked in the Context pane -----------------------
def test_a_compaction_summarizer_call_picked_in_the_box_stays_shown(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    res, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=SIZE)
    with Store.open(tmp_path / "cc.db") as s, s.read() as r:
        summarizer = r.llm_call(res.trace_id, 102)
        before = r.llm_call(res.trace_id, 101)
    assert (summarizer.agent_name, summarizer.branch_type) == ("compact", "compression")
    assert before.branch_type is None
    pb = _played(qtbot, win)
    box = win.context.calls
    qtbot.waitUntil(lambda: box.findData(102) > 0, timeout=30_000)
    _pick(qtbot, box, 102)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.call_index == 101, timeout=30_000)
    report = _report_of(qtbot, win, 102)
    settle(qtbot, win)
    assert box.currentData() == 102, "the box stays on the chosen call (it jumped to 101)"
    assert win.context.report is report and report.label.endswith(" — compaction summarizer")
    assert [r.sequence for r in report.rows][-1] == summarizer.context[-1].sequence
    strip = html.unescape(win.replay.bar.label.text())
    total = pb.frames.numbering.total
    assert (
        f"The Context pane shows call 102 of 0–{total - 1} — compaction summarizer; playback stops "
        f"at the main agent's calls: the other panes show call 101 of 0–{total - 1}, the last one "
        "before it." in strip
    ), strip
    assert pb.active and win.timeline.model.playback is not None
    _shot(win, "picked-call-102.png")
    # stepping playback on leaves the chosen call: the box follows the scrubber again
    win.registry["nav.playback_next"].trigger()
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.call_index == 103, timeout=30_000)
    _report_of(qtbot, win, 103)
    assert box.currentData() == 103
    assert "The Context pane shows" not in win.replay.bar.label.text()
    # a main call picked in the box is a stop: playback goes there, nothing is held
    _pick(qtbot, box, 101)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.call_index == 101, timeout=30_000)
    _report_of(qtbot, win, 101)
    assert box.currentData() == 101 and pb.held is None
    assert win.last_error is None
