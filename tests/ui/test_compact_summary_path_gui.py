"""Issue 13, finding 2 in the window: the imported Claude Code compaction summary is a row of
the main path right after the boundary record, in the context, with the band after it; the
``agent-acompact-*`` run is named as the compaction's model call that wrote it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.importers.api import import_paths
from core.inspector.timeline import TimelineRow
from core.store import Store
from tests.app.test_compact_summary_path_real import SESSION, records
from tests.ui.conftest import open_window
from ui.settings import AppSettings

pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared traces not present")


def test_timeline_shows_the_summary_on_the_main_path(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    (summary,) = [r for r in records(SESSION) if r.get("isCompactSummary")]
    db = tmp_path / "cc.db"
    with Store.open(db) as s:
        (res,) = import_paths(s, [SESSION])
        with s.read() as r:
            (ev,) = r.compactions(res.trace_id)
            mark = r.message(
                res.trace_id, r.message(res.trace_id, ev.summary_sequence).parent_sequence
            )
            fork = ev.details["summarizer"]["fork_sequence"]
    win = open_window(qtbot, settings, db, (1400, 900))
    tl = win.timeline
    assert tl.select_sequence(ev.summary_sequence), "the summary is on the main path"
    row = tl.selected_record()
    assert isinstance(row, TimelineRow) and row.preview.startswith(
        summary["message"]["content"][:40]
    )
    assert "summary" in row.badges and "side_branch" not in row.badges
    view_row = tl.view.currentIndex().row()
    before = tl.model.row_record(view_row - 1)
    assert isinstance(before, TimelineRow) and before.sequence == mark.sequence
    band = tl.model.row_record(view_row + 1)
    assert not isinstance(band, TimelineRow) and band.at_sequence == ev.summary_sequence
    member = tl.model.membership
    assert member is not None and member.contains(0, ev.summary_sequence)
    kept = f"current context: 1 message up to #{ev.summary_sequence} kept by its compaction"
    assert kept + ", then every message sent after it" in tl.status.text()
    assert tl.select_sequence(fork)
    fork_row = tl.selected_record()
    assert isinstance(fork_row, TimelineRow) and "compaction_call" in fork_row.badges
    labels = [tl.branch_box.itemText(i) for i in range(tl.branch_box.count())]
    (label,) = [t for t in labels if t.startswith("compaction's model call")]
    assert f"from #{fork}:" in label and f"wrote the summary #{ev.summary_sequence}" in label
