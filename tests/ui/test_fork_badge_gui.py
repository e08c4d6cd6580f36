"""Screenshot review (h13c), finding 8: in the Claude Code session 0d3a8e6f… a record has
three children in the raw file; the import keeps one continuation on the main path and the
others as an abandoned branch forking from that row. The row is on the path: its badge and
tooltip say a branch forks there ("abandoned branch forks here"), not that the row is
abandoned (it read "abandoned branch")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from core.inspector.branches import branches
from core.inspector.timeline import BADGES
from core.store import Store
from tests.conftest import TRACES
from tests.ui.test_imported_context_gui import _window_on
from ui.settings import AppSettings

SESSION = (
    TRACES / "claude_code/iansherr__claude-code-log/test/test_data/real_projects"
    / "-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"
)  # fmt: skip
pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared/traces not present")


def test_the_fork_row_says_a_branch_forks_there(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    records = [json.loads(line) for line in SESSION.read_text(encoding="utf-8").splitlines()]
    children: dict[str, int] = {}
    for rec in records:
        if rec.get("parentUuid"):
            children[rec["parentUuid"]] = children.get(rec["parentUuid"], 0) + 1
    assert sum(1 for n in children.values() if n > 1) == 1, "one record with several children"
    res, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=(1600, 1000))
    with Store.open(tmp_path / "cc.db") as s, s.read() as r:
        abandoned = [b for b in branches(r, res.trace_id) if b.kind == "abandoned"]
        path = {m.sequence for m in r.iter_main_path(res.trace_id)}
    (fork,) = {b.fork_sequence for b in abandoned}
    assert fork in path and all(b.tip_sequence not in path for b in abandoned)
    model = win.timeline.model
    shown = []
    for path_row in range(model.length):
        rec = model.path_row(path_row)
        if rec is not None and "abandoned" in rec.badges:
            view_row = model.view_row_of(path_row)
            assert view_row is not None
            shown.append((rec, str(model.index(view_row).data(Qt.ItemDataRole.ToolTipRole))))
    ((rec, tip),) = shown
    assert rec.sequence == fork
    assert BADGES["abandoned"] == "abandoned branch forks here"  # the chip the row paints
    assert "An abandoned branch forks off after this message" in tip, tip
    assert win.last_error is None
