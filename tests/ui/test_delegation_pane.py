"""The Delegation pane in the real window: the tree of the delegation demo, details of a
trace (brief diff, refs, packet), clicking a node opens that trace; qtmodeltester."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core.demo.delegation import run_delegation
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.panes.delegation import EMPTY_TEXT, DelegationTreeModel


@pytest.fixture(scope="module")
def delegation_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("deleg") / "d.db"
    with Store.open(path) as s:
        return path, run_delegation(s)


def _names(model: DelegationTreeModel, parent: QModelIndex | None = None) -> list[str]:
    parent = parent or QModelIndex()
    out = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        out.append(str(model.row_at(index).data["name"]))  # type: ignore[union-attr]
        out += _names(model, index)
    return out


def test_pane_shows_the_tree_and_opens_a_node(
    window: MainWindow, qtbot: Any, delegation_db: tuple[Path, dict[str, Any]]
) -> None:
    path, result = delegation_db
    pane = window.delegation
    # the sample trace is no delegation tree; its subagent (agent "explorer", a side
    # branch written by tests/sample_trace.py) is said to be one in the timeline
    assert pane.empty.text() == EMPTY_TEXT + (
        " Its subagent is a side branch in the timeline: 1 subagent, explorer."
        " Navigate → Show branches (Ctrl+B) lists it."
    )
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        assert window.open_store(path, result["trace_id"])
    settle(qtbot, window)
    model = pane.model
    assert _names(model) == [
        "root",
        "root/scout",
        "root/probe",
        "root/analyst",
        "root/analyst/detail",
    ]
    root = model.index(0, 0)
    scout = model.index(0, 0, root)
    assert model.data(scout.siblingAtColumn(2)).startswith("v2 · ")
    assert model.data(scout.siblingAtColumn(4)).startswith("pass · ")
    assert model.data(root.siblingAtColumn(1)) == result["delegation"]["anchor"]["sha256"][:10]
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        pane.tree.clicked.emit(scout)  # selecting a node opens that trace
    scout_id = model.row_at(scout).trace_id  # type: ignore[union-attr]
    assert window.session.trace_id == scout_id
    qtbot.waitUntil(lambda: "changes v1 → v2" in pane.detail.toPlainText(), timeout=20_000)
    text = pane.detail.toPlainText()
    assert "dropped: revised" in text and "granted by root at #" in text
    assert "Validator verdict pass: packet" in text and "left out: system" in text
    current = model.index_of(scout_id)
    assert model.data(current, Qt.ItemDataRole.FontRole).bold()


def test_model_passes_qtmodeltester(
    qtmodeltester: Any, delegation_db: tuple[Path, dict[str, Any]]
) -> None:
    from core.inspector.delegation import delegation_tree

    path, result = delegation_db
    with Store.open(path) as s, s.read() as r:
        rows = delegation_tree(r, result["trace_id"])
    assert rows is not None and len(rows) == 5
    model = DelegationTreeModel()
    model.set_rows(rows, result["trace_id"])
    qtmodeltester.check(model, force_py=True)
    model.set_rows([], None)
    qtmodeltester.check(model, force_py=True)


def test_detail_sits_beside_the_tree_only_when_the_pane_is_wide(qtbot: Any) -> None:
    from ui.panes.delegation import WIDE, DelegationPane
    from ui.session import Session
    from ui.tasks import TaskRunner

    runner = TaskRunner()
    pane = DelegationPane(Session(), runner)
    qtbot.addWidget(pane)
    pane.show()
    pane.resize(WIDE + 100, 300)
    qtbot.waitUntil(lambda: pane.split.orientation() == Qt.Orientation.Horizontal)
    pane.resize(WIDE - 300, 300)
    qtbot.waitUntil(lambda: pane.split.orientation() == Qt.Orientation.Vertical)
    assert pane.empty.isVisible() and not pane.split.isVisible()  # no store: says why
