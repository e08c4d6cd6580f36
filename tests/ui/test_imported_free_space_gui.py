"""Review finding 3 in the window: the Budget pane and the Context pane's "Next call" of an
imported Claude Code session measure free space by the recorded prompt plus what came
after, with the part the transcript lacks drawn as its own component."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.importers.api import import_paths
from core.store import Store
from tests.app.test_imported_free_space import SESSION, last_main_prompt
from tests.ui.conftest import open_window
from ui.settings import AppSettings

pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared traces not present")


def test_budget_and_next_call_show_the_recorded_prompt(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "cc.db"
    with Store.open(db) as s:
        import_paths(s, [SESSION])
    win = open_window(qtbot, settings, db, (1400, 900))
    pane = win.context
    qtbot.waitUntil(lambda: pane.report is not None and pane.report.carried is not None,
                    timeout=30_000)  # fmt: skip
    rep = pane.report
    gap = rep.carried
    assert gap.recorded_prompt_tokens == last_main_prompt(SESSION)
    assert gap.tokens == gap.recorded_prompt_tokens - gap.reconstructed_tokens > 0
    prompt = rep.total + gap.tokens
    assert dict(pane.bar.parts)["not_in_transcript"] == gap.tokens
    window = rep.budget.window
    assert window is not None and pane.bar.free_space() == window - prompt
    assert f"next prompt ≈ <b>{prompt:,}</b>" in pane.summary.text()
    assert f"{gap.tokens:,} not in the transcript" in pane.summary.text()
    qtbot.waitUntil(lambda: f"<b>{prompt:,}</b> tokens" in win.budget.status.text(),
                    timeout=30_000)  # fmt: skip
    assert win.budget.bar.free_space() == window - prompt
    auto = rep.budget.auto_compact
    assert auto is not None
    left = [win.budget.grid.itemAtPosition(r, 2).widget().text() for r in range(2)]
    # the auto-compact point is where compaction fired: what is left is an upper bound, of
    # an estimated prompt (review 13a, findings 4 and 5: it read "89,688 left", as if exact)
    assert f"≤ ≈{auto - prompt:,} left" in left
    assert win.last_error is None


def test_compact_dialog_lowers_the_threshold_like_the_cli(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Any
) -> None:
    """The dialog's dry run on an import measures the threshold on the whole prompt, as
    ``ctxlens compact`` does: at a threshold the transcript alone stays under, but the
    recorded prompt does not, both compact, with the same outcome."""
    import json

    from tests.ui.conftest import preview_auto_at

    db = tmp_path / "cc.db"
    with Store.open(db) as s:
        import_paths(s, [SESSION])
    win = open_window(qtbot, settings, db, (1400, 900))
    trace_id = win.session.trace().id
    code, out = cli("--db", str(db), "compact", trace_id, "--level", "auto",
                    "--threshold", "0.3", "--json")  # fmt: skip
    assert code == 0
    expected = json.loads(out)
    gap = expected["limits"]["not_in_transcript"]
    limit = expected["limits"]["threshold"]["tokens"]
    assert gap > 0 and limit - gap < expected["before"]["tokens"] < limit
    assert expected["status"] != "not_needed"

    dialog, cp = preview_auto_at(qtbot, win, 0.3)
    assert cp.request.not_in_transcript == gap
    got = cp.preview.to_json()
    for key in ("status", "reason", "before", "after", "tokens_saved", "layers"):
        assert got[key] == expected[key], key
    assert f"of which {gap:,} are not in the transcript" in dialog.trace_label.text()
    assert "(option)" in dialog.trace_label.text()
    dialog.reject()
