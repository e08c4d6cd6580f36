"""Run → Run a task…: the real runtime against a loopback endpoint named in the dialog,
the key taken from the environment and sent as the Authorization header, and found
nowhere on disk afterwards."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QDialogButtonBox

from app.gui import settled
from core.llm import ModelServer, Script, ScriptedModel, Step
from ui.dialogs.run_task import RunTaskDialog
from ui.main_window import MainWindow

KEY = "sk-gui-task-7f6e5d4c3b2a1908"


async def _until(check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def _ok(dialog: RunTaskDialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()


def test_run_a_task_against_an_endpoint_from_the_dialog(
    window: MainWindow,
    qloop: qasync.QEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    sample_path: Path,
) -> None:
    monkeypatch.setenv("CTXLENS_API_KEY", KEY)
    script = Script((Step.final("F", "The answer is 42."),))
    with ModelServer(ScriptedModel(script), api_key=KEY) as server:

        async def scenario() -> None:
            try:
                window.registry["run.task"].trigger()
                dialog = window.task_dialog
                assert isinstance(dialog, RunTaskDialog)
                await _until(dialog.isVisible)
                _ok(dialog)  # nothing filled in: refused, with the reason, dialog stays
                assert "base URL" in dialog.error.text() and dialog.isVisible()
                dialog.base_url.setText(server.url)
                dialog.model.setText("scripted")
                dialog.task.setPlainText("What is six times seven?")
                assert dialog.key_state.text() == "✓ key set" and KEY not in dialog.key_state.text()
                _ok(dialog)
                assert await settled(window, 30)
                trace = window.session.trace()
                assert trace is not None and trace.metadata["task"] == "What is six times seven?"
                assert window.registry["run.run"].isEnabled(), window.registry["run.run"].toolTip()
                window.registry["run.run"].trigger()
                await _until(lambda: window.live.idle and window.live.phase.name == "DONE")
                assert await settled(window, 30)
            finally:
                await window.live.aclose()

        qloop.run_until_complete(scenario())
        served = server.requests
    assert served and all(r.status == 200 for r in served), "the key reached the endpoint"
    store = window.session.store
    assert store is not None
    with store.read() as r:
        trace_id = window.session.trace_id
        assert trace_id is not None
        texts = [m.content for m in r.all_messages(trace_id)]
        assert "What is six times seven?" in texts and "The answer is 42." in texts
        assert r.llm_calls(trace_id), "the calls are recorded like any run"
    window.close()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
