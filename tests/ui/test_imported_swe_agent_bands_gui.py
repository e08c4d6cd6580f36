"""Review 13b, finding 3: on a SWE-agent 1.x replay the timeline's bands say what happened
— SWE-agent's history processor elided old observations, every message stayed — instead of
"compaction — imported: 16 → 16 messages, 5,055 → 4,117 tokens (estimated)".

The expectations come from the raw ``.traj`` (plain ``json``): the run's configured
history processors, and each step's ``messages`` (what the next call was sent), whose
observations reading "Old environment output: (N lines omitted)" are the elided ones."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES
from tests.ui.conftest import open_window
from ui.settings import AppSettings

TRAJ = next(iter(sorted((TRACES / "swe_agent").rglob("marshmallow-code__marshmallow-1867.traj"))),
            None)  # fmt: skip
pytestmark = pytest.mark.skipif(TRAJ is None, reason="shared traces not present")
MARKER = "Old environment output:"


def _changes(raw: dict[str, Any]) -> list[tuple[int, int]]:
    """``(messages sent, observations elided)`` at each step whose elided set changed."""
    out, before = [], frozenset[int]()
    for step in raw["trajectory"]:
        sent = step["messages"]
        now = frozenset(n for n, m in enumerate(sent) if str(m["content"]).startswith(MARKER))
        if now != before:
            out.append((len(sent), len(now)))
            before = now
    return out


def test_elided_observations_are_bands_that_say_so(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    assert TRAJ is not None
    raw = json.loads(TRAJ.read_text(encoding="utf-8"))
    processors = [p["type"] for p in raw["replay_config"]["agent"]["history_processors"]]
    assert processors == ["last_n_observations"]
    changes = _changes(raw)
    assert len(changes) == 8
    db = tmp_path / "swe.db"
    code, out = cli("--db", str(db), "import", str(TRAJ), "--json")
    assert code == 0 and json.loads(out)[0]["compactions"] == len(changes)
    win = open_window(qtbot, settings, db, (1400, 900))
    bands = win.timeline.source.bands
    assert len(bands) == len(changes)
    for band, (sent, _elided) in zip(bands, changes, strict=True):
        assert band.level == "elided"
        assert band.messages_before == band.messages_after == sent, "no message left"
        assert band.text.startswith(
            f"observations elided (SWE-agent history processor): {sent} messages kept, "
        ), band.text
        # each figure an estimate, marked on the figure itself: a band cut at the window's
        # edge lost an "(estimated)" at its end first (screenshot review)
        assert re.search(r"kept, ≈[\d,]+ → ≈[\d,]+ tokens$", band.text), band.text
        assert "imported" not in band.text and "→ " + str(sent) + " messages" not in band.text
    status = win.timeline.status.text()
    assert f"{changes[-1][1]} of its messages shortened" in status
    # the export keeps what the importer recorded: the processor the trajectory names
    trace_id = json.loads(out)[0]["trace_id"]
    code, exported = cli("--db", str(db), "export", trace_id, "--format", "json")
    assert code == 0
    events = json.loads(exported)["compactions"]
    assert [e["details"]["processors"] for e in events] == [processors] * len(changes)
    assert [e["details"]["elided_messages"] for e in events] == [e for _, e in changes]
    if shots := os.environ.get("CTXLENS_SHOTS"):
        win.grab().save(str(Path(shots) / "swe_agent_bands.png"))
    assert win.last_error is None
