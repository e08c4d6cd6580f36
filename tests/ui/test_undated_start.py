"""The Traces pane says "undated" where the file recorded no time (a SWE-agent trajectory),
not the import time as if the run had started then."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from core.importers.api import import_paths
from core.inspector.trace_list import summaries
from core.store import Store
from tests.conftest import TRACES
from ui.panes.trace_tree import TraceTreeModel, tooltip

UNDATED = next(iter(sorted((TRACES / "swe_agent").rglob("pydicom__pydicom-1458.traj"))), None)
DATED = next(iter(sorted((TRACES / "codex").rglob("rollout-2025-09-24*.jsonl"))), None)


@pytest.mark.skipif(UNDATED is None or DATED is None, reason="no shared traces")
def test_the_start_column_and_tooltip_say_undated(tmp_path: Path) -> None:
    assert UNDATED is not None and DATED is not None
    with Store.open(tmp_path / "s.db") as store:
        import_paths(store, [UNDATED, DATED])
        with store.read() as r:
            shown = summaries(r)
    model = TraceTreeModel()
    model.set_rows(list(shown))
    start_col = next(
        c for c in range(model.columnCount())
        if model.headerData(c, Qt.Orientation.Horizontal) == "Start"
    )  # fmt: skip
    cells = {s.trace.source: model.index(n, start_col).data() for n, s in enumerate(shown)}
    assert cells["swe-agent"] == "undated" and cells["codex"] != "undated"
    swe = next(s for s in shown if s.trace.source == "swe-agent")
    assert "start not recorded (imported " in tooltip(swe)
