"""The delegation demo in the real window: Run → New demo run… offers the scenario, Run
drives it on the ``DelegatingRunner`` (its ``agent()`` tool, through the re-runner
registry) to the whole tree, which the Delegation pane shows; Step continues a stopped
delegation trace on the same runner. Real store file, scripted model on 127.0.0.1."""

from __future__ import annotations

import os
from pathlib import Path

import qasync
from PySide6.QtWidgets import QDialogButtonBox

from core.delegation.runner import DelegatingRunner
from core.delegation.store import children
from tests.helpers.delegation_run import stopped_after
from tests.ui.test_run_controls import _drive, _open_new_demo, _settle, _step, _until
from ui.main_window import MainWindow

SHOT = Path(os.environ.get("CTXLENS_SHOT_DIR", "/tmp/h15")) / "delegation_pane.png"


def _names(win: MainWindow) -> list[str]:
    model = win.delegation.model
    return [str(r.data["name"]) for r in model.rows]


def test_new_delegation_demo_runs_to_the_whole_tree(
    window: MainWindow, qloop: qasync.QEventLoop
) -> None:
    async def scenario() -> None:
        dialog = await _open_new_demo(window)
        dialog.scenario.setCurrentIndex(dialog.scenario.findData("delegation"))
        assert not dialog.mode.isEnabled() and not dialog.steps.isEnabled()
        assert "validator_chars" in dialog.settings.placeholderText()
        dialog.settings.setPlainText("validator_chars=0")
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        ok.click()
        assert dialog.isVisible() and "validator_chars" in dialog.error.text()  # stays open
        dialog.settings.setPlainText("validator_chars=40000")
        ok.click()
        await _settle(window)
        trace = window.session.trace()
        assert (
            trace is not None
            and trace.metadata["delegation_demo"]["limits"]["validator_chars"] == 40_000
        )
        assert isinstance(window.live.runner, DelegatingRunner)  # opened with the turn
        window.registry["run.run"].trigger()
        await _settle(window)
        assert window.live.last_stop == "done"
        store = window.session.store
        assert store is not None
        with store.read() as r:
            kids = [c.name for c in children(r, trace.id)]
        assert kids == ["root/scout", "root/probe", "root/analyst"]
        window.delegation.reload()
        await _until(lambda: len(_names(window)) == 5)
        assert _names(window)[-1] == "root/analyst/detail"
        pane = window.delegation
        analyst = pane.model.index(2, 0, pane.model.index(0, 0))
        pane.tree.clicked.emit(analyst)  # opens the analyst's trace and shows its packet
        await _until(lambda: "fixed: artifact ranking.md" in pane.detail.toPlainText())
        assert "fixed: root candidate answer (root #" in pane.detail.toPlainText()
        await _settle(window)  # the analyst's trace is open: it runs only inside its root
        assert window.session.trace_id != trace.id
        assert window.run_label.text() == (
            "Run: a delegated child runs inside its root's run (open the root)"
        )
        assert not window.registry["run.step"].isEnabled()
        assert trace.id in window.registry["run.step"].toolTip()
        window.resize(1600, 1000)
        window.docks["delegation"].raise_()
        await _settle(window)
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        assert window.grab().save(str(SHOT))

    _drive(qloop, window, scenario)


def test_step_continues_a_stopped_delegation_trace(
    window: MainWindow, qloop: qasync.QEventLoop, tmp_path: Path
) -> None:
    db = tmp_path / "stopped.db"
    trace_id = stopped_after(db, 3)  # the scout has run once

    async def scenario() -> None:
        assert window.open_store(db, trace_id)
        await _settle(window)
        assert window.registry["run.step"].isEnabled()
        for _ in range(4):  # prepare, model (revise the scout), tools (agent), bookkeeping
            await _step(window)
        assert isinstance(window.live.runner, DelegatingRunner)
        store = window.session.store
        assert store is not None
        with store.read() as r:
            (scout,) = children(r, trace_id)
            versions = r.conn.exec_driver_sql(
                "select count(*) from task_protocol_versions where trace_id = ?",
                (scout.trace_id,),
            ).scalar()
        assert versions == 2  # the Step ran the root's agent() call: scout revised

    _drive(qloop, window, scenario)
