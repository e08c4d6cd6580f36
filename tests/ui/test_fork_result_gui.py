"""Review 7, 8 and 11, through the window on a finished delegation demo run (real store,
the demo's scripted model):

- the fork dialog offers only the choices that differ for the trace, each saying what
  follows the edit (it offered "the demo's scripted model (stop for other traces)" and
  "the demo's scripted model": the same run on a demo trace);
- a finished fork is opened in the window at the edited message, and what it ended with
  stays in the status bar when an action's status tip passes over it (a timed message,
  erased by the first hover, was all there was);
- the agents the forked root calls are titled "Fork at #1 · root/…" in the trace list, not
  like the source's own agents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QStatusTipEvent
from PySide6.QtWidgets import QApplication

import core.demo  # noqa: F401 (registers the demo's re-runners)
from core.demo.delegation import run_delegation
from core.inspector.rerun import RerunOutcome
from core.store import Store
from tests.ui.conftest import settle
from tests.ui.test_replay_gui import open_window
from ui.main_window import MainWindow
from ui.replay.fork_dialog import ForkDialog
from ui.settings import AppSettings


@pytest.fixture
def delegation(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "delegation.db"
    with Store.open(db) as store:
        return db, str(run_delegation(store)["trace_id"])


def _fork_dialog(qtbot: Any, win: MainWindow, sequence: int) -> ForkDialog:
    assert win.timeline.select_sequence(sequence)
    win.registry["run.fork"].trigger()
    dialog = win.replay.fork_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def test_fork_dialog_offers_only_choices_that_differ(
    qtbot: Any, settings: AppSettings, delegation: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.delenv("CTXLENS_BASE_URL", raising=False)
    db, root = delegation
    win = open_window(qtbot, settings, db, root)
    dialog = _fork_dialog(qtbot, win, 1)
    keys = [dialog.after.itemData(i) for i in range(dialog.after.count())]
    texts = [dialog.after.itemText(i) for i in range(dialog.after.count())]
    assert keys == ["scripted", "stop"], texts
    assert len(set(texts)) == len(texts) and "scripted model" in texts[0]
    assert "stop" in texts[1] and "scripted" not in texts[1]
    assert all(dialog.after.itemData(i, 3) for i in range(dialog.after.count()))  # tooltips
    assert dialog.after.toolTip() == dialog.choices["scripted"].detail
    assert not dialog.no_model.isVisible()
    dialog.close()
    settle(qtbot, win)


def test_a_finished_fork_is_opened_and_its_outcome_stays_readable(
    qtbot: Any, settings: AppSettings, delegation: tuple[Path, str]
) -> None:
    db, root = delegation
    win = open_window(qtbot, settings, db, root)
    with Store.open(db) as s, s.read() as r:
        source_titles = {t.title for t in r.traces() if t.id != root}
    dialog = _fork_dialog(qtbot, win, 1)
    dialog.editor.setPlainText(dialog.editor.toPlainText() + "\nKeep the report short.")
    with qtbot.waitSignal(dialog.finished_run, timeout=120_000) as sig:
        dialog.run_button.click()
    outcome: RerunOutcome = sig.args[0]
    assert outcome.result is not None
    new = outcome.result.trace_id

    # the window shows the fork, at the edited message, and marks it in the trace list
    qtbot.waitUntil(lambda: win.session.trace_id == new, timeout=10_000)
    settle(qtbot, win)
    qtbot.waitUntil(lambda: win.timeline.selected_sequence() == 1, timeout=10_000)
    assert "Keep the report short." in win.detail.body.toPlainText()
    qtbot.waitUntil(lambda: win.traces.selected_ids() == [new], timeout=10_000)
    view = win.replay.compare_window  # and the comparison, as before
    assert view is not None and view.isVisible()

    # the outcome stays in the status bar: a hovered action's tip covers it, then it is back
    line = win.replay.outcome
    assert line.isVisible() and new in line.text() and line.text().startswith("Fork at #1")
    shown = line.text()
    win.registry["run.rerun"].showStatusText(win)  # the pointer over a menu entry
    assert win.statusBar().currentMessage() and not line.isVisible()
    QApplication.sendEvent(win, QStatusTipEvent(""))  # … and off it again
    assert line.isVisible() and line.text() == shown

    # the forked tree's agents read as the fork's, never as the source's
    qtbot.waitUntil(lambda: win.traces.record(new) is not None, timeout=10_000)
    listed = {t.id: t.title for t in win.traces.model.records}
    with Store.open(db) as s, s.read() as r:
        tree = [
            t.id for t in r.traces() if (t.metadata or {}).get("delegation", {}).get("root") == new
        ]
    kids = [t for t in tree if t != new]
    assert kids, "the fork delegated again"
    for kid in kids:
        assert listed[kid].startswith("Fork at #1 · root/"), listed[kid]
        assert listed[kid] not in source_titles
    assert len(set(listed.values())) == len(listed)  # no two rows read alike
    view.close()
    dialog.close()
    settle(qtbot, win)
