"""Issue 17, Rewind then look at the panes: the scrubber counts the current path's calls and
names those a rewind abandoned, the Context pane numbers calls as the scrubber does and
dims (and lists last) the abandoned ones — on the real window over the sample store, which
already holds a rewind, and after a further rewind made in the window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core.inspector.call_numbers import ABANDONED, CallNumbering
from core.inspector.timeline import TimelineRow
from core.records import Trace
from core.replay.calls import trace_calls
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow


def _numbering(sample_path: Path, trace_id: str) -> Any:
    with Store.open(sample_path) as s, s.read() as r:
        return CallNumbering.of(r, trace_id, trace_calls(r, trace_id))  # the scrubber's


def _indexed(qtbot: Any, win: MainWindow) -> Any:
    pb = win.replay.playback
    qtbot.waitUntil(lambda: pb.frames is not None, timeout=20_000)
    return pb


def _box(win: MainWindow) -> list[tuple[str, Any, bool]]:
    combo = win.context.calls
    out = []
    for i in range(combo.count()):
        fg = combo.itemData(i, Qt.ItemDataRole.ForegroundRole)
        out.append((combo.itemText(i), combo.itemData(i), fg is not None))
    return out


def _check_panes(qtbot: Any, win: MainWindow, sample_path: Path, trace_id: str) -> None:
    numbering = _numbering(sample_path, trace_id)
    abandoned = [n for n in numbering.calls if n.abandoned]
    assert abandoned, "the trace has calls a rewind left behind"
    pb = _indexed(qtbot, win)
    bar = win.replay.bar
    assert pb.frames.stops == numbering.current_main()
    assert f"{len(pb.frames.stops):,} main-agent calls to play back" in bar.label.text()
    note = f"{len(abandoned):,} call{'s' if len(abandoned) != 1 else ''} {ABANDONED}"
    assert note in bar.notes.text() and bar.notes.isVisible()

    box = _box(win)[1:]  # after "Next call (current context)"
    current = [n for n in numbering.calls if not n.abandoned]
    assert [d for _t, d, _f in box] == [n.call.call_index for n in current + abandoned]
    assert [f for _t, _d, f in box] == [False] * len(current) + [True] * len(abandoned)
    assert all(t.startswith(f"Call {n.number} of 0–{numbering.total - 1} — ") for (t, _d, _f), n in
               zip(box, current, strict=False))  # fmt: skip
    assert all(t.startswith(f"A call {ABANDONED} — ") for t, _d, _f in box[len(current) :])

    # the last stop: the scrubber and the Context pane name the same call the same way
    last = len(pb.frames.stops) - 1
    pb.scrub(last)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.stop == last, timeout=20_000)
    settle(qtbot, win)
    name = numbering.name(pb.frames.stops[last])
    assert bar.label.text().startswith(f"<b>{name} · ")
    assert name == f"call {numbering.total - 1} of 0–{numbering.total - 1}"
    qtbot.waitUntil(lambda: win.context.report is not None and win.context.report.label == name)
    assert win.context.calls.currentText().startswith(name[:1].upper() + name[1:])
    assert f"<b>{name}</b>" in win.context.summary.text()
    pb.go_live()
    settle(qtbot, win)


def test_the_scrubber_and_context_pane_agree_after_a_rewind(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    _check_panes(qtbot, window, sample_path, sample_trace.id)


def test_a_rewind_in_the_window_moves_its_calls_to_the_abandoned_ones(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    before = _numbering(sample_path, sample_trace.id)
    target = before.calls[8].call.head
    with qtbot.waitSignal(window.session.changed):
        window.rewind_to(target)  # what Rewind's confirmation runs (test_window.py clicks it)
    settle(qtbot, window)
    after = _numbering(sample_path, sample_trace.id)
    assert after.total < before.total and after.abandoned > before.abandoned
    _check_panes(qtbot, window, sample_path, sample_trace.id)
    # the next call's diff starts from the current path's last call, not an abandoned one
    window.context.select_call(None)
    qtbot.waitUntil(lambda: window.context.report is not None and window.context.report.label != "")
    settle(qtbot, window)
    diff = window.context.diff
    assert diff is not None and diff.before_label == f"call {after.total - 1}"


def test_a_parent_goal_counts_the_messages_clicking_it_shows(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    before = _numbering(sample_path, sample_trace.id)
    with qtbot.waitSignal(window.goals.loaded, timeout=10_000):
        window.rewind_to(before.calls[8].call.head)
    settle(qtbot, window)
    nodes = {n.id: n for n in window.goals.model.nodes}
    parent = nodes["1"]
    kids = [n for n in nodes.values() if n.id.startswith("1.")]
    assert kids and parent.messages < parent.shown_messages, "1's messages are mostly in 1.x"
    assert parent.shown_messages == parent.messages + sum(k.messages for k in kids)
    index = window.goals.model.index_of("1")
    msgs = window.goals.model.index(index.row(), 1, index.parent())
    assert msgs.data() == f"{parent.shown_messages:,}"
    rect = window.goals.tree.visualRect(index)
    with qtbot.waitSignal(window.timeline.searched, timeout=10_000):
        qtbot.mouseClick(window.goals.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    model = window.timeline.model
    rows = [model.row_record(i) for i in range(model.rowCount())]
    assert len([r for r in rows if isinstance(r, TimelineRow)]) == parent.shown_messages
    assert "with its sub-goals" in window.goals.detail.text()


def test_rewind_then_step_on_a_demo_run_counts_the_new_branchs_calls(
    qtbot: Any, settings: Any, qloop: Any, tmp_path_factory: Any
) -> None:
    from tests.helpers.shared_demo import demo_copy
    from tests.ui.test_replay_gui import open_window
    from tests.ui.test_run_controls import _drive, _single_call_result, _step

    db, trace_id = demo_copy(tmp_path_factory, tmp_path_factory.mktemp("rewind-step"))
    win = open_window(qtbot, settings, db, trace_id)
    with Store.open(db) as s, s.read() as r:
        path = r.main_path_sequences(trace_id)
    with Store.open(db) as s:
        target = _single_call_result(s, trace_id, path[: len(path) // 2])
    before = _numbering(db, trace_id)

    async def scenario() -> None:
        win.rewind_to(target)
        await _settle_async(win)
        for _ in range(4):
            await _step(win)

    _drive(qloop, win, scenario)
    settle(qtbot, win)
    after = _numbering(db, trace_id)
    assert after.abandoned > before.abandoned == 0 and len(after.calls) > len(before.calls)
    new = [n for n in after.calls if n.call.position >= len(before.calls)]
    assert new and all(not n.abandoned for n in new), "the new branch's calls are current"
    _check_panes(qtbot, win, db, trace_id)


async def _settle_async(win: MainWindow) -> None:
    from app.gui import settled

    assert await settled(win, 30)
