"""Playback, "Re-run with…" and the comparison view in the real window (issue 9).

Every expectation is computed here from the store: ``Playback.state`` for what a call saw,
``goal_outline`` / ``skill_rows`` for the current state, the new trace's own records for
the re-run. The demo store is a copy of the session's one demo run (one per module; the
re-run test gets a private copy because it writes a trace)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

from core.importers.api import import_paths
from core.inspector.comparison import ContextDiffRows
from core.inspector.goals import GoalNode, goal_outline
from core.inspector.panels import skill_rows
from core.inspector.rerun import RerunOutcome
from core.replay.compare import Comparison
from core.replay.playback import Playback, PlaybackState
from core.store import Store
from tests.conftest import TRACES
from tests.helpers.playback import main_positions
from tests.helpers.shared_demo import demo_copy
from tests.ui import conftest
from tests.ui.conftest import choose, settle
from ui.main_window import MainWindow
from ui.panes.goals import GoalTreeModel
from ui.replay.install import ReplayUi
from ui.settings import AppSettings
from ui.timeline.model import CursorRole

# A trace without call records (a bare OpenAI message list logs no call, context or usage;
# SWE-agent 0.x, used here before, counts its replies as calls in model_stats, so they are).
NO_CALLS = (
    TRACES / "chat_messages/OpenHands__software-agent-sdk/tests/fixtures/llm_data"
    / "fncall-llm-message.json"
)  # fmt: skip


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return demo_copy(tmp_path_factory, tmp_path_factory.mktemp("replay-gui"))


def open_window(qtbot: Any, settings: AppSettings, db: Path, trace: str | None) -> MainWindow:
    win: MainWindow = conftest.open_window(qtbot, settings, db, trace=trace)
    qtbot.waitUntil(lambda: win.replay.playback.frames is not None, timeout=20_000)
    return win


@pytest.fixture
def demo_window(qtbot: Any, settings: AppSettings, demo: tuple[Path, str]) -> Iterator[MainWindow]:
    yield open_window(qtbot, settings, demo[0], demo[1])


def ui_of(win: MainWindow) -> ReplayUi:
    return win.replay


def scrub(qtbot: Any, win: MainWindow, stop: int) -> None:
    pb = ui_of(win).playback
    pb.scrub(stop)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == stop, timeout=20_000)
    settle(qtbot, win)


def state_at(db: Path, trace: str, position: int) -> PlaybackState:
    with Store.open(db) as s, s.read() as r:
        return Playback.open(r, trace).state(r, position)


def interesting_stop(db: Path, trace: str) -> tuple[int, int]:
    """A main call after a compaction, with a goal in progress and a grant made."""
    with Store.open(db) as s, s.read() as r:
        pb = Playback.open(r, trace)
        for n, pos in enumerate(main_positions(pb)):
            st = pb.state(r, pos)
            goals = st.goals.goals if st.goals is not None else ()
            if (
                st.compactions
                and st.grants
                and any(g.status == "in_progress" for g in goals)
                and any(g.status == "completed" for g in goals)
            ):
                return n, pos
    raise AssertionError("the demo has no such call")


# -- playback ------------------------------------------------------------------------------
def test_scrubbing_to_a_call_shows_that_calls_state_in_every_pane(
    demo_window: MainWindow, qtbot: Any, qtmodeltester: Any, demo: tuple[Path, str]
) -> None:
    db, trace = demo
    win = demo_window
    stop, position = interesting_stop(db, trace)
    scrub(qtbot, win, stop)
    state = state_at(db, trace, position)
    assert state.goals is not None and state.skills is not None and state.grants is not None

    # goals: statuses and focus as of that call, not as of now
    shown = {n.id: n.status for n in win.goals.model.nodes}
    assert shown == {g.id: g.status for g in state.goals.goals}
    assert [n.id for n in win.goals.model.nodes if n.focus] == (
        [state.goals.focus] if state.goals.focus else []
    )
    with Store.open(db) as s, s.read() as r:
        now = {n.id: n.status for n in goal_outline(r, trace)}
    assert shown != now, "the demo's goals changed after that call"

    # context: the call's exact item list
    qtbot.waitUntil(
        lambda: (
            win.context.report is not None
            and win.context.report.call_index == state.call.call_index
        ),
        timeout=20_000,
    )
    report = win.context.report
    assert report is not None
    assert [r.sequence for r in report.rows] == [i.sequence for i in state.context]
    assert win.context.calls.currentData() == state.call.call_index

    # skills and grants as of then
    skills = [(r.message_sequence, r.status) for r in win.skills.model.records]
    assert skills == [(s.message_sequence, s.status) for s in state.skills]
    grants = [(g.ref_id, g.revoked_at) for g in win.grants.model.records]
    assert grants == [(g.ref_id, g.revoked_at) for g in state.grants]

    # the timeline: cursor on the head, later rows "not yet", in context = in that call's
    tl = win.timeline
    assert tl.selected_sequence() == state.head and state.head_row is not None
    model = tl.model
    in_context = {i.sequence for i in state.context if i.sequence is not None}
    dimmed = 0
    for path_row in range(state.head_row + 1):
        row = model.path_row(path_row)
        assert row is not None and not model.later(path_row)
        assert model.in_context(path_row, row) == (row.sequence in in_context)
        dimmed += row.sequence not in in_context
    assert dimmed > 0, "a compaction happened before that call"
    assert model.later(state.head_row + 1)
    cursor = [r for r in range(model.rowCount()) if model.data(model.index(r), CursorRole)]
    assert cursor == [model.view_row_of(state.head_row)]
    qtmodeltester.check(model)

    # budget and the scrubber's label
    assert f"{state.tokens.cumulative_input:,} in" in win.budget.status.text()
    bar = ui_of(win).bar
    assert f"call {position} of 0–" in bar.label.text()
    assert f"{state.tokens.input:,} tokens in" in bar.label.text()
    assert bar.slider.value() == stop and bar.live.isEnabled()
    assert win.registry["nav.playback_live"].isEnabled()


def test_left_right_step_one_call(
    demo_window: MainWindow, qtbot: Any, demo: tuple[Path, str]
) -> None:
    win = demo_window
    pb = ui_of(win).playback
    assert pb.frames is not None
    stops = pb.frames.stops
    scrub(qtbot, win, 10)
    slider = ui_of(win).bar.slider
    slider.setFocus()
    qtbot.keyClick(slider, Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == 11, timeout=20_000)
    assert pb.frame is not None and pb.frame.position == stops[11]
    qtbot.keyClick(slider, Qt.Key.Key_Left)
    qtbot.keyClick(slider, Qt.Key.Key_Left)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == 9, timeout=20_000)
    settle(qtbot, win)
    assert win.timeline.selected_sequence() == state_at(*demo, stops[9]).head

    # anywhere in the window: Alt+Left / Alt+Right
    prev, nxt = win.registry["nav.playback_prev"], win.registry["nav.playback_next"]
    assert prev.shortcut().toString() == "Alt+Left" and nxt.shortcut().toString() == "Alt+Right"
    nxt.trigger()
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == 10, timeout=20_000)
    prev.trigger()
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == 9, timeout=20_000)
    settle(qtbot, win)


def test_every_shortcut_is_unique(demo_window: MainWindow) -> None:
    keys = [
        e.action.shortcut().toString()
        for e in demo_window.registry.all()
        if not e.action.shortcut().isEmpty()
    ]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


def test_play_advances_and_stops_at_the_end(
    demo_window: MainWindow, qtbot: Any, demo: tuple[Path, str]
) -> None:
    win = demo_window
    ui = ui_of(win)
    pb = ui.playback
    assert pb.frames is not None
    last = len(pb.frames.stops) - 1
    seen: list[int] = []
    pb.frame_shown.connect(lambda f: seen.append(f.stop))
    ui.bar.speed.setCurrentIndex(ui.bar.speed.findData(20.0))
    scrub(qtbot, win, last - 6)
    ui.bar.play.click()
    assert pb.playing
    qtbot.waitUntil(lambda: not pb.playing, timeout=20_000)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == last, timeout=20_000)
    settle(qtbot, win)
    assert seen[0] == last - 6 and seen[-1] == last
    assert seen == sorted(seen) and len(seen) >= 3, "it advanced call by call"
    # while playing only the cursor moved; stopped at the end, the head row is selected
    assert pb.stop == last and not pb.timer.isActive()
    assert win.timeline.selected_sequence() == state_at(*demo, pb.frames.stops[last]).head


def test_live_returns_every_pane_to_the_current_state(
    demo_window: MainWindow, qtbot: Any, demo: tuple[Path, str]
) -> None:
    db, trace = demo
    win = demo_window
    scrub(qtbot, win, 5)
    assert win.timeline.model.playback is not None
    win.registry["nav.playback_live"].trigger()  # Esc
    settle(qtbot, win)
    ui = ui_of(win)
    assert not ui.playback.active and not win.registry["nav.playback_live"].isEnabled()
    with Store.open(db) as s, s.read() as r:
        goals = goal_outline(r, trace)
        skills = skill_rows(r, trace)
        path = r.main_path_sequences(trace)
    assert win.goals.model.nodes == goals
    assert win.skills.model.records == skills
    assert win.timeline.model.playback is None
    assert win.timeline.selected_sequence() == path[-1]
    assert win.context.calls.currentData() is None
    assert win.context.report is not None and win.context.report.call_index is None
    assert "Current context" in win.budget.status.text()
    assert ui.bar.slider.value() == ui.bar.slider.maximum() and not ui.bar.live.isEnabled()


def test_a_refresh_of_the_same_trace_keeps_playing_back_the_same_call(
    demo_window: MainWindow, qtbot: Any, demo: tuple[Path, str]
) -> None:
    db, trace = demo
    win = demo_window
    pb = ui_of(win).playback
    scrub(qtbot, win, 30)
    assert pb.frames is not None
    position = pb.frames.stops[30]
    win.session.refresh()  # what a live run's growth or an applied compaction does
    qtbot.waitUntil(lambda: pb.frame is not None and pb.active, timeout=20_000)
    settle(qtbot, win)
    assert pb.frame is not None and pb.frame.position == position
    state = state_at(db, trace, position)
    assert state.goals is not None
    assert {n.id: n.status for n in win.goals.model.nodes} == {
        g.id: g.status for g in state.goals.goals
    }
    assert win.timeline.selected_sequence() == state.head


def test_imported_trace_says_what_it_does_not_record(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    if not NO_CALLS.is_file():
        pytest.skip("the shared OpenAI message list is not there")
    db = tmp_path / "imported.db"
    with Store.open(db) as s:
        (result,) = import_paths(s, [NO_CALLS])
    win = open_window(qtbot, settings, db, result.trace_id)
    ui = ui_of(win)
    assert ui.bar.notes.isVisible()
    for part in ("model calls", "goals", "skill injections", "grants"):
        assert part in ui.bar.notes.text()
    scrub(qtbot, win, 0)
    with Store.open(db) as s, s.read() as r:
        pb = Playback.open(r, result.trace_id)
        state = pb.state(r, main_positions(pb)[0])
    assert state.goals is None and not state.context_recorded
    assert win.goals.empty.text() == "Goals: not recorded in this trace."
    assert win.goals.empty.isVisible() and not win.goals.tree.isVisible()
    assert win.skills.table.empty_text == "Skill injections: not recorded in this trace."
    assert win.grants.table.empty_text == "Grants: not recorded in this trace."
    qtbot.waitUntil(
        lambda: (
            win.context.report is not None
            and win.context.report.label == f"the context at #{state.head}"
        ),
        timeout=20_000,
    )
    assert [r.sequence for r in win.context.report.rows] == [i.sequence for i in state.context]
    # one wording for where the context comes from (h13d): the strip said "context derived
    # from the path", the Context pane beside it nothing; both say the same now
    settle(qtbot, win)
    assert "context reconstructed from the transcript" in ui.bar.label.text()
    assert "context reconstructed from the transcript" in win.context.summary.text()
    assert win.last_error is None
    win.registry["nav.playback_live"].trigger()
    settle(qtbot, win)
    # live: the same sentence as playback (it said "No goals recorded on this trace.")
    assert win.goals.empty.text() == "Goals: not recorded in this trace."


# -- re-run and compare --------------------------------------------------------------------
def test_rerun_with_a_smaller_window_opens_the_comparison(
    qtbot: Any,
    qtmodeltester: Any,
    settings: AppSettings,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    win = open_window(qtbot, settings, db, source)
    ui = ui_of(win)
    scrub(qtbot, win, 20)
    assert ui.playback.frames is not None
    win.registry["run.rerun"].trigger()
    dialog = ui.rerun_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    qtbot.waitUntil(lambda: dialog.start.count() > 1, timeout=20_000)
    assert dialog.start.currentData() == ui.playback.frames.stops[20], "the scrubber's call"
    dialog.start.setCurrentIndex(dialog.start.findData(0))
    choose(dialog.editors["window"], 8000)
    assert dialog.options().settings == ("window=8000",)
    assert "--set window=8000" in dialog.command.text()
    progress: list[Any] = []
    win.runner.progress.connect(lambda _label, value: progress.append(value))
    with qtbot.waitSignal(dialog.finished_run, timeout=120_000) as sig:
        dialog.run_button.click()
        assert dialog.stop_button.isEnabled() and not dialog.run_button.isEnabled()
    outcome: RerunOutcome = sig.args[0]
    assert outcome.result is not None and not outcome.cancelled
    new = outcome.result.trace_id
    assert progress and progress[-1].calls == outcome.result.calls, "calls replayed, live"
    with Store.open(db) as s, s.read() as r:
        assert r.trace(new).metadata["replay_of"]["settings"] == ["window=8000"]
        compactions = (len(r.compactions(source)), len(r.compactions(new)))
    listed = lambda: new in [t.id for t in win.traces.model.records]  # noqa: E731
    qtbot.waitUntil(listed, timeout=10_000)  # the list is read off the UI thread
    assert listed(), "the trace browser lists it"

    view = ui.compare_window
    assert view is not None and view.isVisible()
    qtbot.waitUntil(lambda: view.comparison is not None, timeout=30_000)
    cmp: Comparison = view.comparison  # type: ignore[assignment]
    assert (cmp.a.trace_id, cmp.b.trace_id) == (source, new)
    assert (len(cmp.a.compactions), len(cmp.b.compactions)) == compactions
    rows = {r.key: r for r in view.metrics.records}
    settle(qtbot, win)
    bold = QFont(view.metrics_view.font())
    bold.setBold(True)  # the rows that differ are bold
    widest = max(QFontMetrics(bold).horizontalAdvance(r.label) for r in rows.values())
    assert view.metrics_view.columnWidth(0) > widest, "every metric's name is whole"
    figure = QFontMetrics(bold).horizontalAdvance(rows["input_tokens_all_calls"].a)
    assert min(view.metrics_view.columnWidth(c) for c in (1, 2)) > figure, "and its figures"
    assert rows["compactions"].delta.startswith(f"{compactions[1] - compactions[0]:+,}")
    assert compactions[1] > compactions[0]
    assert rows["input_tokens"].delta.startswith("-"), "a smaller window sends fewer tokens"
    assert rows["redone_tool_calls"].a == rows["redone_tool_calls"].b == "0"
    # the dialog's report and the comparison give the same input figures, each row says
    # which calls it sums (it read "all calls" over the main agent's, hcmp)
    r = outcome.result
    assert rows["input_tokens"].label == "input tokens (main-agent calls)"
    assert rows["input_tokens"].b == f"{r.input_tokens:,} (recorded)"
    assert rows["input_tokens_all_calls"].label == "input tokens (all calls)"
    assert rows["input_tokens_all_calls"].b == f"{r.input_tokens_all_calls:,} (recorded)"
    assert r.input_tokens_all_calls > r.input_tokens
    said = dialog.status.text()
    assert f"{r.input_tokens_all_calls:,} input tokens over all calls (recorded)" in said
    assert f"{r.input_tokens:,} in the {r.main_calls:,} main-agent calls (recorded)" in said
    assert view.chart.series == {"a": cmp.a.input_tokens, "b": cmp.b.input_tokens}
    assert view.calls.rowCount() == len(cmp.pairs)

    # the first call that differs is selected; its two contexts side by side
    qtbot.waitUntil(lambda: view.diff is not None, timeout=20_000)
    diff: ContextDiffRows = view.diff  # type: ignore[assignment]
    assert diff.k == cmp.first_difference and not diff.same
    assert view.side_a.rowCount() == len(diff.a_rows) and view.side_b.marked == diff.only_b
    assert diff.only_a or diff.only_b
    later = min(len(cmp.pairs) - 1, diff.k + 30)
    view.select_call(later)
    qtbot.waitUntil(lambda: view.diff is not None and view.diff.k == later, timeout=20_000)
    assert view.chart.selected == later
    for m in (view.metrics, view.settings, view.calls, view.side_a, view.side_b, view.retention):
        qtmodeltester.check(m)

    # the HTML report
    out = view.export_to(str(tmp_path / "report.html"))
    assert out is not None
    text = out.read_text(encoding="utf-8")
    assert f"{sum(cmp.a.input_tokens):,}" in text and f"{sum(cmp.b.input_tokens):,}" in text
    assert "redone tool calls" in text and "<svg" in text and "<script" not in text
    settle(qtbot, win)

    # from the trace browser: two rows selected → Compare…
    view.close()
    win.traces.select_ids([source, new])
    assert win.traces.compare_button.isEnabled()
    win.traces.compare_button.click()
    again = ui.compare_window
    assert again is not None and again is not view
    qtbot.waitUntil(lambda: again.comparison is not None, timeout=30_000)
    assert again.comparison is not None
    assert {again.comparison.a.trace_id, again.comparison.b.trace_id} == {source, new}
    settle(qtbot, win)


def test_stopping_a_rerun_keeps_the_partial_trace(
    qtbot: Any, settings: AppSettings, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    win = open_window(qtbot, settings, db, source)
    ui = ui_of(win)
    ui.show_rerun()
    dialog = ui.rerun_dialog
    assert dialog is not None
    dialog.extra.setText("compaction=naive")
    assert dialog.options().settings == ("compaction=naive",)
    dialog.extra.setText("no_such_setting=1")
    assert not dialog.run_button.isEnabled() and dialog.error.isVisible()
    dialog.extra.setText("")
    calls: list[int] = []
    win.runner.progress.connect(lambda _label, v: calls.append(getattr(v, "calls", 0)))
    dialog.run()
    qtbot.waitUntil(lambda: bool(calls) and calls[-1] >= 5, timeout=60_000)
    with qtbot.waitSignal(dialog.finished_run, timeout=60_000) as sig:
        dialog.stop_button.click()
    outcome: RerunOutcome = sig.args[0]
    assert outcome.cancelled and outcome.trace_id is not None
    assert "Cancelled" in dialog.status.text()
    assert ui.compare_window is None, "nothing to compare after a stop"
    with Store.open(db) as s, s.read() as r:
        written = r.llm_call_count(outcome.trace_id)
        total = r.llm_call_count(source)
    assert outcome.progress.calls <= written < total
    settle(qtbot, win)


def test_goal_model_updates_in_place_when_the_tree_keeps_its_shape(
    qtbot: Any, qtmodeltester: Any
) -> None:
    model = GoalTreeModel()
    first = [GoalNode("1", None, 3, 30, "in_progress", "A"), GoalNode("1.1", "1", 1, 9, "pending")]
    model.set_nodes(first)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    later = [replace(first[0], status="completed", summary="done"), first[1]]
    assert model.update_nodes(later) and not resets, "same shape: no reset"
    node = model.node(model.index_of("1"))
    assert node is not None and node.status == "completed" and node.summary == "done"
    qtmodeltester.check(model)
    assert not model.update_nodes([first[0]]), "another shape needs a reset"


def test_the_live_line_counts_one_call_in_the_singular(qtbot: Any) -> None:
    """A one-call trace (an Inspect sample) said "1 main-agent calls to play back"."""
    from ui.replay.scrubber import ScrubberBar

    bar = ScrubberBar()
    qtbot.addWidget(bar)
    bar.set_live(1)
    assert "1 main-agent call to play back" in bar.label.text()
    bar.set_live(2)
    assert "2 main-agent calls to play back" in bar.label.text()


def test_badges_of_rows_not_yet_reached_stay_readable(
    demo_window: MainWindow, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Screenshot review: in playback the rows after the call are drawn at a quarter of
    their opacity, and so were their badges, white text on a faded chip. The badges of those
    rows (and of rows out of context) are drawn at ``BADGE_OPACITY`` at least."""
    from PySide6.QtGui import QPainter

    from ui.timeline import delegate

    win = demo_window
    scrub(qtbot, win, 3)
    model = win.timeline.model
    later = [
        r
        for r in range(model.rowCount())
        if model.data(model.index(r), delegate.LaterRole)
        and (row := model.data(model.index(r), delegate.RowRole)) is not None
        and getattr(row, "badges", ())
    ]
    assert later, "some row after call 3 has a badge"
    drawn: list[tuple[str, float]] = []
    labels = set(delegate.BADGES.values())
    draw_text = QPainter.drawText

    def spy(self: QPainter, *args: Any) -> None:
        text = args[-1]
        if isinstance(text, str) and text in labels:
            drawn.append((text, self.opacity()))
        draw_text(self, *args)

    monkeypatch.setattr(QPainter, "drawText", spy)
    view = win.timeline.view
    view.scrollTo(model.index(later[0]))
    view.viewport().grab()
    assert drawn and min(opacity for _, opacity in drawn) >= delegate.BADGE_OPACITY
