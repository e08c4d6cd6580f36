"""Driving the real window on a real store file: open, select, search, rewind, context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from core.inspector.bands import Band
from core.inspector.timeline import TimelineRow
from core.records import Trace
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.settings import AppSettings


def _path(sample_path: Path, trace_id: str) -> list[int]:
    with Store.open(sample_path) as s, s.read() as r:
        return r.main_path_sequences(trace_id)


def test_open_store_lists_traces_and_shows_the_path(window: MainWindow, sample_path: Path) -> None:
    trace = window.session.trace()
    assert trace is not None
    assert window.traces.model.rowCount() == 1
    path = _path(sample_path, trace.id)
    model = window.timeline.model
    assert model.length == len(path)
    assert model.rowCount() == len(path) + len(model.bands) and len(model.bands) == 2
    assert window.timeline.selected_sequence() == path[-1], "opens on the head"
    assert window.detail.detail is not None and window.detail.detail.message.sequence == path[-1]
    assert str(sample_path) in window.windowTitle()


def test_selecting_a_band_row_reports_the_boundary(window: MainWindow, qtbot: Any) -> None:
    model = window.timeline.model
    band_row = next(i for i in range(model.rowCount()) if model.locate(i)[0] == "band")
    with qtbot.waitSignal(window.timeline.band_selected) as sig:
        window.timeline.select_view_row(band_row)
    band = sig.args[0]
    assert isinstance(band, Band) and band.text.startswith("finished goal 1.1")
    assert band.text in window.statusBar().currentMessage()


def test_rewind_from_the_timeline_changes_the_main_path(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    before = _path(sample_path, sample_trace.id)
    target = before[10]
    assert window.timeline.select_sequence(target)
    window.registry["run.rewind"].trigger()
    box = window.confirm_box
    assert isinstance(box, QMessageBox)
    qtbot.waitUntil(box.isVisible)
    with qtbot.waitSignal(window.session.changed):
        box.button(QMessageBox.StandardButton.Yes).click()
    settle(qtbot, window)
    after = _path(sample_path, sample_trace.id)
    assert after == before[:11]
    assert window.session.trace().head == target  # type: ignore[union-attr]
    assert window.timeline.model.length == 11
    assert window.timeline.selected_sequence() == target
    # the rewind went before both boundaries: they are detached, originals are back
    assert window.timeline.model.bands == [] and len(window.timeline.source.detached) == 2  # type: ignore[union-attr]
    kinds = [b.kind for b in window.timeline.source.branches]  # type: ignore[union-attr]
    assert "abandoned" in kinds


def test_cancelling_the_rewind_changes_nothing(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    before = _path(sample_path, sample_trace.id)
    window.timeline.select_sequence(before[5])
    window.registry["run.rewind"].trigger()
    box = window.confirm_box
    assert box is not None
    qtbot.waitUntil(box.isVisible)
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(20)
    assert _path(sample_path, sample_trace.id) == before


def test_search_finds_a_tool_call(window: MainWindow, qtbot: Any) -> None:
    tl = window.timeline
    tl.search_box.setText("tool:apply_patch")
    with qtbot.waitSignal(tl.searched, timeout=10_000) as sig:
        tl.search_box.returnPressed.emit()
    result = sig.args[0]
    assert result.on_path
    record = tl.selected_record()
    assert isinstance(record, TimelineRow) and "apply_patch" in record.tool_names
    tl.only_matches.setChecked(True)
    rows = [tl.model.row_record(i) for i in range(tl.model.rowCount())]
    assert rows and all(isinstance(r, TimelineRow) and "apply_patch" in r.tool_names for r in rows)


def test_goal_click_filters_the_timeline(window: MainWindow, qtbot: Any) -> None:
    with qtbot.waitSignal(window.timeline.searched, timeout=10_000):
        window.goals.goal_chosen.emit("1.1")
    model = window.timeline.model
    assert 0 < model.rowCount() < model.length + len(model.bands), "only the goal's rows"
    goals = {model.row_record(i).goal_id for i in range(model.rowCount())}  # type: ignore[union-attr]
    assert goals == {"1.1"}


def test_context_bar_parts_sum_to_the_total(window: MainWindow, qtbot: Any) -> None:
    rep = window.context.report
    assert rep is not None and rep.total > 0
    bar = window.context.bar
    assert sum(n for _, n in bar.parts) == bar.total == rep.total
    assert sum(r.tokens for r in rep.rows) == rep.total
    rects = bar.segment_rects(bar.rect().adjusted(6, 0, -6, 0))
    width = sum(r.width() for _, r in rects)
    assert abs(width - (bar.width() - 12) * rep.total / bar.scale()) < 0.5
    # a recorded call: its list reproduces the recorded request hash
    with qtbot.waitSignal(window.context.loaded, timeout=10_000) as sig:
        window.context.select_call(3)
    call_rep = sig.args[0]
    assert call_rep.call_index == 3 and call_rep.matches_record is True
    assert window.context.diff is not None and window.context.diff.after_label == "call 4"
    assert window.budget.bar.total == rep.total, "the budget pane shows the current context"


def test_detail_links_jump_between_call_and_result(window: MainWindow, qtbot: Any) -> None:
    tl = window.timeline
    tl.search_box.setText("tool:read_file role:assistant")
    with qtbot.waitSignal(tl.searched, timeout=10_000):
        tl.run_search()
    settle(qtbot, window)  # the message is read off the UI thread
    call_seq = tl.selected_sequence()
    detail = window.detail.detail
    assert detail is not None and detail.message.sequence == call_seq
    (link,) = detail.links
    window.detail.links.linkActivated.emit(f"seq:{link.sequence}")
    assert tl.selected_sequence() == link.sequence
    settle(qtbot, window)  # the message is read off the UI thread
    assert window.detail.detail.message.tool_call_id == detail.message.tool_calls[0].id  # type: ignore[union-attr]


def test_skill_row_selects_its_message(window: MainWindow) -> None:
    model = window.skills.model
    assert model.rowCount() == 2
    rec = model.record(1)
    assert rec is not None and rec.status == "re-injected"
    window.skills.table.clicked.emit(model.index(1, 0))
    assert window.timeline.selected_sequence() == rec.message_sequence


def test_abandoned_branch_can_be_viewed(window: MainWindow, qtbot: Any) -> None:
    window.registry["nav.branches"].trigger()
    assert window.timeline.branch_box.isVisible()
    box = window.timeline.branch_box
    i = next(i for i in range(box.count()) if box.itemText(i).startswith("abandoned"))
    tip = box.itemData(i)
    with qtbot.waitSignal(window.timeline.loaded, timeout=10_000):
        box.activated.emit(i)
    assert window.timeline.model.head == tip
    assert window.timeline.model.row_record(window.timeline.model.rowCount() - 1).sequence == tip  # type: ignore[union-attr]
    assert box.itemData(box.currentIndex()) == tip
    assert window.timeline.banner.isVisible()
    with qtbot.waitSignal(window.timeline.loaded, timeout=10_000):
        window.registry["nav.main"].trigger()
    assert not window.timeline.banner.isVisible()


def test_command_palette_lists_every_action_and_runs_one(
    window: MainWindow, qtbot: Any, settings: AppSettings
) -> None:
    qtbot.keyClick(
        window,
        Qt.Key.Key_P,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    pal = window.palette_dialog
    assert pal is not None
    qtbot.waitUntil(pal.isVisible)
    assert pal.list.count() == len(window.registry.all())
    qtbot.keyClicks(pal.query, "dark theme")
    assert "Dark theme" in pal.list.currentItem().text()
    qtbot.keyClick(pal.query, Qt.Key.Key_Return)
    assert window.registry["view.dark"].isChecked()
    assert settings.theme == "dark"


def test_palette_puts_word_start_matches_before_scattered_ones(
    window: MainWindow, qtbot: Any
) -> None:
    """Typing "comp" lists Compact… and Compare traces… first, not "Command palette…" (whose c-o-m-p
    spans two words) nor "Back to main path", and selects Compact…."""
    window.registry["view.palette"].trigger()
    pal = window.palette_dialog
    assert pal is not None
    qtbot.waitUntil(pal.isVisible)
    qtbot.keyClicks(pal.query, "comp")
    shown = [pal.list.item(i).text().split("    ")[0] for i in range(pal.list.count())]
    assert shown[:2] == ["Run: Compact…", "Run: Compare traces…"], shown
    assert set(shown[2:]) >= {"View: Command palette…", "Navigate: Back to main path"}
    assert pal.list.currentRow() == 0
    pal.close()


def test_every_action_has_a_shortcut_and_disabled_ones_explain_themselves(
    window: MainWindow,
) -> None:
    for entry in window.registry.all():
        assert not entry.action.shortcut().isEmpty(), entry.id
    for name in ("run.run", "run.step"):  # the sample trace cannot run, and they say why
        action = window.registry[name]
        assert not action.isEnabled() and "cannot be run" in action.toolTip()
    for entry in window.registry.all():
        assert "Arrives with" not in entry.action.toolTip(), entry.id
    for name in ("run.compact", "file.import", "file.import_folder", "file.open_url"):
        action = window.registry[name]
        assert action.isEnabled() and "Arrives with" not in action.toolTip(), name


def test_layout_theme_and_recent_stores_are_remembered(
    qtbot: Any, settings: AppSettings, sample_path: Path
) -> None:
    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.show()
    first.open_store(sample_path)
    settle(qtbot, first)
    first.registry["view.dark"].setChecked(True)
    first.docks["goals"].hide()
    first.close()
    second = MainWindow(AppSettings(settings.path))
    qtbot.addWidget(second)
    second.show()
    assert second.registry["view.dark"].isChecked()
    assert not second.docks["goals"].isVisible()
    assert second.settings.recent_stores() == [str(sample_path)]
    second.registry["view.dark"].setChecked(False)
    second.close()


def test_a_bad_store_shows_an_error_not_a_crash(
    window: MainWindow, tmp_path: Path, qtbot: Any
) -> None:
    bad = tmp_path / "not-a-store.db"
    bad.write_text("hello")
    assert not window.open_store(bad)
    box = window.last_error
    assert box is not None
    qtbot.waitUntil(box.isVisible)
    assert "not-a-store.db" in box.text()
    box.close()
    assert window.session.store is None or window.session.store.describe() != str(bad)


def test_cancel_background_work_stops_a_running_query(window: MainWindow, qtbot: Any) -> None:
    import threading

    started = threading.Event()

    def slow(c: Any) -> None:
        started.set()
        c.cancel.wait(10)

    window.runner.submit("slow query", slow, lambda _r: None, key="slow")
    assert started.wait(5)
    assert window.busy_cancel.isVisibleTo(window)
    window.registry["view.cancel"].trigger()
    assert not window.runner.busy
    assert "slow query" in window.statusBar().currentMessage()
    assert window.runner.wait(5000)


def test_closing_hides_the_window_before_waiting_for_running_reports(
    window: MainWindow, monkeypatch: Any
) -> None:
    """Closing waits (up to 10 s) for reports still computing on the workers (a compare
    or a compaction preview of a long trace does not stop mid-way): the window is gone
    before that wait, not frozen on screen through it (docs/bench.md, "UI-thread stalls
    of the user's actions")."""
    shown_while_waiting: list[bool] = []
    shutdown = window.runner.shutdown

    def waiting() -> None:
        shown_while_waiting.append(window.isVisible())
        shutdown()

    monkeypatch.setattr(window.runner, "shutdown", waiting)
    window.show()
    window.close()
    assert shown_while_waiting == [False]
