"""Skills and grants panels in the real window: states, revocations, clicks select messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from core.records import Trace
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow


def test_grants_panel_shows_when_and_why_a_grant_was_revoked(
    window: MainWindow, sample_path: Path, sample_trace: Trace
) -> None:
    with Store.open(sample_path) as s, s.read() as r:
        revoked = [g for g in r.grants(sample_trace.id) if g.revoked_reason]
    assert revoked
    model = window.grants.model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    at_col, why_col = headers.index("Revoked at"), headers.index("Why")
    for g in revoked:
        row = next(i for i, rec in enumerate(model.records) if rec.ref_id == g.ref_id)
        assert model.data(model.index(row, at_col)) == str(g.revoked_at_sequence)
        assert model.data(model.index(row, why_col)) == g.revoked_reason
        window.grants.table.clicked.emit(model.index(row, 0))
        rec = model.records[row]
        target = rec.message_sequence if rec.message_sequence is not None else rec.source_sequence
        assert window.timeline.selected_sequence() == target


def test_skills_panel_states_explain_themselves(window: MainWindow, qtbot: Any) -> None:
    model = window.skills.model
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    status_col = headers.index("Status")
    states = [model.data(model.index(i, status_col)) for i in range(model.rowCount())]
    assert states == ["compacted away", "re-injected"]
    tips = [
        model.data(model.index(i, status_col), Qt.ItemDataRole.ToolTipRole)
        for i in range(model.rowCount())
    ]
    assert all(tips) and "left the current context" in tips[0]
    then = model.data(model.index(0, headers.index("Then")))
    assert then == f"reinject as #{model.records[1].message_sequence}"
    window.skills.table.clicked.emit(model.index(0, 0))
    settle(qtbot, window)  # the message is read off the UI thread
    assert window.detail.detail is not None
    assert window.detail.detail.message.sequence == model.records[0].message_sequence
