"""Screenshot review (h13c), findings 1 and 9: what the panes say when they have no rows.

- A new store (``ctxlens gui --db NEW.db``, the window as the app starts it): the timeline
  and the trace list name the actions that bring a trace in, with their menus and
  shortcuts as the action table has them; no pane speaks of "this trace".
- An imported Claude Code session in the live view: goals, skill injections and grants
  are "not recorded in this trace" (what playback says), never "No skills were injected";
  the Delegation pane says the tool records no delegation tree and counts and names the
  session's subagent (a Task call's ``subagent_type`` in the raw file), not "not part of a
  delegation tree".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.ui.test_imported_context_gui import SESSION, _window_on
from ui.main_window import MainWindow
from ui.settings import AppSettings
from ui.window_actions import ACTIONS

#: The actions an empty store's window must point to.
BRING_A_TRACE = ("file.import", "file.import_folder", "run.new_demo", "file.open")


def _named(action_id: str) -> str:
    """``File → Import traces… (Ctrl+I)``, from the action table."""
    spec = next(s for s in ACTIONS if s.id == action_id)
    return f"{spec.menu} → {spec.text.replace('&', '')} ({spec.shortcut})"


def test_a_new_store_names_the_actions_that_bring_a_trace_in(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    win = MainWindow(settings, paint_first=True)  # as app/gui.py:make_window starts it
    qtbot.addWidget(win)
    win.resize(1600, 1000)
    assert win.open_store(tmp_path / "new.db")
    win.show()
    qtbot.waitUntil(lambda: win.ready, timeout=20_000)
    qtbot.waitUntil(win.is_settled, timeout=20_000)
    assert win.session.trace_id is None
    timeline, listed = win.timeline.view.empty_text, win.traces.table.empty_text
    for action_id in BRING_A_TRACE:
        assert _named(action_id) in timeline, (action_id, timeline)
        assert _named(action_id) in listed, (action_id, listed)
    assert "drop them onto the window" in timeline
    said = {
        "goals": win.goals.empty.text(),
        "skills": win.skills.table.empty_text,
        "grants": win.grants.table.empty_text,
        "delegation": win.delegation.empty.text(),
        "playback": win.replay.bar.label.text(),
        "message": win.detail.facts.text(),
    }
    for pane, text in said.items():
        assert not re.search(r"(in|on) this trace", text), (pane, text)
        assert "No trace open" in text, (pane, text)
    assert win.goals.empty.isVisible() and not win.goals.tree.isVisible()
    assert win.last_error is None


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared Claude Code session is not there")
def test_an_import_says_what_its_tool_does_not_record(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    raw = SESSION.read_text(encoding="utf-8")
    (kind,) = set(re.findall(r'"subagent_type":"([^"]+)"', raw))
    files = SESSION.with_suffix("") / "subagents"
    subagents = [p for p in files.glob("agent-*.jsonl") if not p.name.startswith("agent-acompact")]
    assert len(subagents) == 1
    res, win = _window_on(qtbot, settings, tmp_path / "cc.db", SESSION, size=(1600, 1000))
    qtbot.waitUntil(lambda: win.delegation.empty.text() != "Loading…", timeout=20_000)
    assert win.goals.empty.text() == "Goals: not recorded in this trace."
    assert win.goals.empty.isVisible() and not win.goals.tree.isVisible()
    assert win.skills.table.empty_text == "Skill injections: not recorded in this trace."
    assert win.grants.table.empty_text == "Grants: not recorded in this trace."
    strip = win.replay.bar.notes.text()
    for part in ("goals", "skill injections", "grants"):
        assert part in strip, "the strip and the panes say the same"
    text = win.delegation.empty.text()
    assert "not part of a delegation tree" not in text, text
    assert f"{res.format} does not record them" in text, text
    assert f"Its subagent is a side branch in the timeline: 1 subagent, {kind}." in text, text
    assert "Ctrl+B" in text
    assert win.last_error is None
