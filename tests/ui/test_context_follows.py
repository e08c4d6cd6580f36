"""One notion of "step": a call chosen in the Context pane is a playback position, so the
timeline's in/out-of-context marks (and every pane) follow it, as the scrubber does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.shared_demo import demo_copy
from tests.ui.conftest import settle
from tests.ui.test_replay_gui import open_window
from ui.settings import AppSettings


def test_choosing_a_call_in_the_context_pane_plays_back_to_it(
    qtbot: Any, settings: AppSettings, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    win = open_window(qtbot, settings, db, source)
    pb = win.replay.playback
    combo = win.context.calls
    assert pb.frames is not None
    target = next(c for c in pb.frames.playback.calls[20:] if c.agent_name == "main")
    i = combo.findData(target.call_index)
    assert i > 0
    combo.setCurrentIndex(i)
    combo.activated.emit(i)
    qtbot.waitUntil(lambda: pb.frame is not None and pb.frame.call_index == target.call_index,
                    timeout=30_000)  # fmt: skip
    model = win.timeline.model
    assert pb.active and model.playback is not None, "the timeline marks follow the call"
    assert win.context.calls.currentData() == target.call_index
    combo.setCurrentIndex(0)
    combo.activated.emit(0)
    qtbot.waitUntil(lambda: not pb.active, timeout=10_000)
    assert model.playback is None
    settle(qtbot, win)
