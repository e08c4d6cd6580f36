"""Issue 13, finding 3: the timeline's status line on a real SWE-agent 1.x replay says what
the current context holds, in the message numbers the list shows, and the list marks the
tool outputs the history processor shortened ("Old environment output: (N lines omitted)").

The expectation comes from the raw ``.traj`` (plain ``json``): the last step's ``messages``
are the history the model was sent, with the elided outputs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core.importers.api import import_paths
from core.inspector.timeline import TimelineRow
from core.store import Store
from tests.conftest import TRACES
from tests.ui.conftest import open_window
from ui.settings import AppSettings
from ui.timeline.model import InContextRole, RowRole, ShortenedRole

TRAJ = (
    TRACES / "swe_agent/SWE-agent__SWE-agent/trajectories/demonstrations"
    / "replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source"
    / "marshmallow-code__marshmallow-1867.traj"
)  # fmt: skip
pytestmark = pytest.mark.skipif(not TRAJ.is_file(), reason="shared traces not present")


def test_status_line_matches_the_list(qtbot: Any, settings: AppSettings, tmp_path: Path) -> None:
    sent = json.loads(TRAJ.read_text(encoding="utf-8"))["trajectory"][-1]["messages"]
    elided = [n for n, m in enumerate(sent)
              if str(m["content"]).startswith("Old environment output:")]  # fmt: skip
    assert len(elided) == 8
    db = tmp_path / "swe.db"
    with Store.open(db) as s:
        import_paths(s, [TRAJ])
    win = open_window(qtbot, settings, db, (1400, 900))
    tl = win.timeline
    model = tl.model
    rows = [model.index(v) for v in range(model.rowCount())]
    messages = [(i, model.data(i, RowRole)) for i in rows]
    messages = [(i, r) for i, r in messages if isinstance(r, TimelineRow)]
    assert [r.sequence for _, r in messages] == list(range(len(sent)))
    # Every message of the path is in the context; the elided outputs are marked shortened.
    assert all(model.data(i, InContextRole) for i, _ in messages)
    shortened = [r.sequence for i, r in messages if model.data(i, ShortenedRole)]
    assert shortened == elided
    last = max(e.at_sequence for e in tl.source.bands if e.at_sequence is not None)
    status = tl.status.text()
    assert "row " not in status and "starts after" not in status
    assert (
        f"whole path in context, 8 of its messages shortened by the compaction after #{last}"
        in status
    )
    tip = model.data(messages[elided[0]][0], Qt.ItemDataRole.ToolTipRole)
    assert "shortened by a compaction" in tip
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.grab().save(str(Path(shots) / "swe_agent_status.png"))
