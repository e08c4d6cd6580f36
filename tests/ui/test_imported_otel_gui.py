"""Review 13b, finding 1: an any-agent run is one agent, named ``any_agent``; its rows are
the main path's and carry no **subagent** badge (every row did, because the badge tested
the agent's name against "main" instead of the branch the message is on).

The expectation comes from the raw file (plain ``json``): one ``invoke_agent`` span, and
every other span under it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.inspector.timeline import TimelineRow
from tests.conftest import TRACES
from tests.ui.conftest import open_window
from ui.settings import AppSettings
from ui.timeline.model import RowRole

ANY_AGENT = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
pytestmark = pytest.mark.skipif(not ANY_AGENT.is_file(), reason="shared/traces not present")


def test_a_single_agent_run_has_no_subagent_rows(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    agents = [s for s in spans if s["name"].startswith("invoke_agent")]
    assert len(agents) == 1
    root = agents[0]["context"]["span_id"]
    assert all(s["parent"]["span_id"] == root for s in spans if s is not agents[0])
    db = tmp_path / "otel.db"
    code, out = cli("--db", str(db), "import", str(ANY_AGENT), "--json")
    assert code == 0 and json.loads(out)[0]["subagents"] == 0
    win = open_window(qtbot, settings, db, (1400, 900))
    model = win.timeline.model
    rows = [model.data(model.index(v), RowRole) for v in range(model.rowCount())]
    rows = [r for r in rows if isinstance(r, TimelineRow)]
    assert len(rows) == 7
    assert {r.agent_name for r in rows} == {agents[0]["attributes"]["gen_ai.agent.name"]}
    assert [r.sequence for r in rows if "subagent" in r.badges] == []
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.grab().save(str(Path(shots) / "otel_any_agent.png"))
