"""The goals pane in the real window: statuses, focus, summaries, filtering, refresh."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core.goals import goal_tree_at
from core.inspector.timeline import TimelineRow
from core.records import NewMessage, Trace
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow


def _main_path_goals(path: Path, trace_id: str) -> list[str | None]:
    with Store.open(path) as s, s.read() as r:
        return [m.goal_id for m in r.iter_main_path(trace_id)]


def test_pane_shows_the_recorded_tree(
    window: MainWindow, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as s, s.read() as r:
        tree = goal_tree_at(r, sample_trace.id)
    model = window.goals.model
    shown = {n.id: n for n in model.nodes}
    assert list(shown) == [g.id for g in tree.goals]
    for g in tree.goals:
        assert (shown[g.id].status, shown[g.id].summary) == (g.status, g.summary)
    focus = tree.focused()
    assert focus is not None and shown[focus.id].focus
    # nothing chosen yet: the detail strip describes the goal in focus
    assert window.goals.detail.text().startswith(f"{focus.id} {focus.title}")
    assert "in focus" in window.goals.detail.text()
    assert window.goals.legend.isVisible()


def test_choosing_a_goal_filters_the_timeline(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    index = window.goals.model.index_of("1")
    rect = window.goals.tree.visualRect(index)
    with qtbot.waitSignal(window.timeline.searched, timeout=10_000):
        qtbot.mouseClick(window.goals.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    model = window.timeline.model
    rows = [model.row_record(i) for i in range(model.rowCount())]
    goals = [r.goal_id for r in rows if isinstance(r, TimelineRow)]
    expected = [g for g in _main_path_goals(sample_path, sample_trace.id) if g and g[0] == "1"]
    assert goals == expected and {"1", "1.1", "1.2"} <= set(goals)
    assert "summary:" in window.goals.detail.text(), "a completed goal shows its summary"
    with qtbot.waitSignal(window.goals.goal_chosen):
        window.goals.clear_button.click()
    assert model.rowCount() == model.length + len(model.bands), "every row is shown again"


def test_pane_refreshes_after_a_rewind(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as s, s.read() as r:
        done_2 = next(
            e for e in r.goal_events(sample_trace.id) if e.op == "done" and e.goal_id == "2"
        )
    with qtbot.waitSignal(window.goals.loaded, timeout=10_000):
        window.rewind_to(done_2.sequence - 1)
    settle(qtbot, window)
    shown = {n.id: n for n in window.goals.model.nodes}
    assert shown["2"].status == "in_progress" and shown["2"].focus
    assert shown["4"].status == "pending"
    assert shown["3"].messages == 0, "goal 3's messages are past the rewind point"


def test_imported_trace_without_goal_events_uses_message_goal_ids(
    window: MainWindow, qtbot: Any, sample_path: Path
) -> None:
    with Store.open(sample_path) as s:
        tr = s.create_trace("imported, no goal events")
        s.append(tr.id, [NewMessage("user", "x", goal_id="5.1"), NewMessage("user", "y")])
    window.reload()
    with qtbot.waitSignal(window.goals.loaded, timeout=10_000):
        window.open_trace(tr.id)
    settle(qtbot, window)
    nodes = window.goals.model.nodes
    assert [(n.id, n.status, n.messages) for n in nodes] == [("5", "", 0), ("5.1", "", 1)]
    assert not window.goals.legend.isVisible()


def test_selecting_a_goal_asks_each_row_once_for_its_size(qtbot: Any) -> None:
    """A long outline is laid out on every selection (rows differ in height): the delegate
    reads a row's node alone, not every role the style asks for (a 1,100-goal trace spent
    200 ms of UI thread there; docs/bench.md, "UI-thread stalls of the user's actions")."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    from core.inspector.goals import GoalNode
    from ui.panes.goals import GoalPane, NodeRole
    from ui.session import Session
    from ui.tasks import TaskRunner

    session = Session()
    pane = GoalPane(session, TaskRunner())
    qtbot.addWidget(pane)
    pane.resize(400, 300)
    pane.show()
    nodes = [GoalNode(id=str(k), parent=None, messages=1, tokens=1, status="done" if k % 2 else "",
                      title=f"goal {k}", focus=k == 3, summary="s" if k % 3 == 0 else "")
             for k in range(1, 301)]  # fmt: skip
    pane._show(nodes)
    roles: list[int] = []
    data = pane.model.data
    pane.model.data = lambda index, role=Qt.ItemDataRole.DisplayRole: (  # type: ignore[method-assign]
        roles.append(role) or data(index, role)
    )
    delegate = pane.tree.itemDelegate()
    option = QStyleOptionViewItem()
    option.initFrom(pane.tree)
    for row in range(50, 60):  # the kinds of rows are known after the first few
        delegate.sizeHint(option, pane.model.index(row, 0))
    assert set(roles) == {NodeRole}
    assert len(roles) == 10
    summary = pane.model.index(59, 0)  # goal 60: a summary line under its title
    plain = pane.model.index(60, 0)
    assert delegate.sizeHint(option, summary).height() > delegate.sizeHint(option, plain).height()
