"""Run → Edit message and continue…: edit the selected message in the window, continue
into a new trace, and the comparison view opens on the two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.inspector.rerun import RerunOutcome
from core.store import Store
from tests.helpers.shared_demo import demo_copy
from tests.ui.conftest import settle
from tests.ui.test_replay_gui import open_window
from ui.settings import AppSettings

EDITED = "The user changed their mind: report only the top 3 entities."


@pytest.mark.slow
def test_edit_a_message_and_continue_opens_the_comparison(
    qtbot: Any, settings: AppSettings, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    win = open_window(qtbot, settings, db, source)
    with Store.open(db) as s, s.read() as r:
        user = next(m for m in r.iter_main_path(source) if m.role == "user")
    assert win.timeline.select_sequence(user.sequence)
    win.registry["run.fork"].trigger()
    dialog = win.replay.fork_dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    assert dialog.editor.toPlainText() == user.content
    assert dialog.run() is None and "unchanged" in dialog.error.text()
    dialog.editor.setPlainText(EDITED)
    with qtbot.waitSignal(dialog.finished_run, timeout=180_000) as sig:
        dialog.run_button.click()
    outcome: RerunOutcome = sig.args[0]
    assert outcome.result is not None
    new = outcome.result.trace_id
    assert outcome.result.diverged is not None and outcome.result.live_replies > 0
    with Store.open(db) as s, s.read() as r:
        assert r.message(new, user.sequence).content == EDITED
        assert r.message(source, user.sequence).content == user.content
    view = win.replay.compare_window
    assert view is not None and view.isVisible()
    qtbot.waitUntil(lambda: view.comparison is not None, timeout=60_000)
    assert (view.comparison.a.trace_id, view.comparison.b.trace_id) == (source, new)  # type: ignore[union-attr]
    assert new in [t.id for t in win.traces.model.records]
    view.close()
    dialog.close()
    settle(qtbot, win)


@pytest.mark.slow
def test_comparing_runs_of_different_lengths_warns(
    qtbot: Any, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    from core.replay.fork import fork_options
    from core.replay.rerun import replay
    from ui.replay.compare_view import ComparisonWindow
    from ui.tasks import TaskRunner

    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    store = Store.open(db)
    runner = TaskRunner()
    try:
        with store.read() as r:
            user = next(m for m in r.iter_main_path(source) if m.role == "user")
        short = replay(
            store, *fork_options(store, source, user.sequence, EDITED, on_diverge="stop")
        )
        assert short.stopped == "diverged"
        view = ComparisonWindow(store, runner, source, short.trace_id)
        qtbot.addWidget(view)
        view.show()
        view.load()
        qtbot.waitUntil(lambda: view.comparison is not None, timeout=60_000)
        assert "differ in length" in view.heading.text()
        same = ComparisonWindow(store, runner, source, source)
        qtbot.addWidget(same)
        same.load()
        qtbot.waitUntil(lambda: same.comparison is not None, timeout=60_000)
        assert "differ in length" not in same.heading.text()
    finally:
        qtbot.waitUntil(lambda: not runner.busy, timeout=60_000)
        runner.shutdown()
        store.close()


def test_fork_continues_on_the_configured_endpoint(
    qtbot: Any, window: Any, sample_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an endpoint configured (``CTXLENS_BASE_URL``, ``CTXLENS_MODEL``) the dialog
    offers it first; Continue sends the edited context to it and the fork records its
    replies (their model and usage as the endpoint reported them)."""
    from tests.helpers.loopback_endpoint import ANSWER, MODEL, USAGE, loopback_endpoint

    trace = window.session.trace_id
    with Store.open(sample_path) as s, s.read() as r:
        user = next(m for m in r.iter_main_path(trace) if m.role == "user")
    with loopback_endpoint() as (endpoint, env):
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        assert window.timeline.select_sequence(user.sequence)
        window.registry["run.fork"].trigger()
        dialog = window.replay.fork_dialog
        qtbot.waitUntil(dialog.isVisible)
        assert dialog.after.currentData() == "endpoint"
        assert (
            MODEL in dialog.after.currentText()
            and env["CTXLENS_BASE_URL"] in dialog.after.currentText()
        )
        dialog.editor.setPlainText(EDITED)
        with qtbot.waitSignal(dialog.finished_run, timeout=120_000) as sig:
            dialog.run_button.click()
    outcome: RerunOutcome = sig.args[0]
    assert outcome.result is not None and outcome.result.live_replies > 0
    assert "configured" not in dialog.error.text() and MODEL in dialog.status.text()
    assert any(m.get("content") == EDITED for m in endpoint.requests[0].messages)
    new = outcome.result.trace_id
    with Store.open(sample_path) as s, s.read() as r:
        assert ANSWER in [m.content for m in r.iter_main_path(new) if m.role == "assistant"]
        assert all(c.model == MODEL and c.usage == USAGE for c in r.llm_calls(new))
    view = window.replay.compare_window
    qtbot.waitUntil(lambda: view is not None and view.comparison is not None, timeout=60_000)
    view.close()
    dialog.close()
    settle(qtbot, window)


def test_without_an_endpoint_the_fork_dialog_does_not_offer_one(
    qtbot: Any, window: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CTXLENS_BASE_URL", raising=False)
    window.timeline.select_sequence(1)
    window.registry["run.fork"].trigger()
    dialog = window.replay.fork_dialog
    qtbot.waitUntil(dialog.isVisible)
    values = [dialog.after.itemData(i) for i in range(dialog.after.count())]
    assert "endpoint" not in values
    # the sample trace has no offline model either (review 8: "the demo's scripted model"
    # was offered here, and refused when chosen): stop is the one choice, and why is said
    assert values == ["stop"]
    assert dialog.no_model.isVisible() and "CTXLENS_BASE_URL" in dialog.no_model.text()
    dialog.close()
