"""Review 13b, finding 4, in the window: the playback strip on the pydicom SWE-agent
trajectory said "Not recorded in this trace: … token usage (input tokens are counted by
ctxlens)" while its ``info.model_stats`` records the run's tokens; it now says only the
per-call usage is not recorded. A replay trajectory whose model counted no tokens (0 and 0
over its calls) still says token usage is not recorded. Raw values: plain ``json``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES
from tests.ui.conftest import open_window
from ui.settings import AppSettings

SWE = TRACES / "swe_agent"
PYDICOM = next(iter(sorted(SWE.rglob("pydicom__pydicom-1458.traj"))), None)
MARSHMALLOW = next(iter(sorted(SWE.rglob("marshmallow-code__marshmallow-1867.traj"))), None)
pytestmark = pytest.mark.skipif(PYDICOM is None or MARSHMALLOW is None, reason="no traces")


def _notes(qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Any, path: Path) -> str:
    db = tmp_path / f"{path.stem[:10]}.db"
    assert cli("--db", str(db), "import", str(path), "--json")[0] == 0
    win = open_window(qtbot, settings, db, (1400, 900))
    notes = win.replay.bar.notes
    qtbot.waitUntil(lambda: "Not recorded in this trace" in notes.text(), timeout=30_000)
    text: str = notes.text()
    assert win.last_error is None
    win.close()
    return text


def test_strip_says_totals_are_recorded(
    qtbot: Any, settings: AppSettings, tmp_path: Path, cli: Callable[..., tuple[int, str]]
) -> None:
    assert PYDICOM is not None and MARSHMALLOW is not None
    stats = json.loads(PYDICOM.read_text(encoding="utf-8"))["info"]["model_stats"]
    assert stats["tokens_sent"] > 0 and stats["tokens_received"] > 0
    text = _notes(qtbot, settings, tmp_path, cli, PYDICOM)
    assert "token usage (" not in text, text
    assert "token usage per call (the run's totals are recorded" in text, text
    replay = json.loads(MARSHMALLOW.read_text(encoding="utf-8"))["info"]["model_stats"]
    assert replay["tokens_sent"] == replay["tokens_received"] == 0 < replay["api_calls"]
    text = _notes(qtbot, settings, tmp_path, cli, MARSHMALLOW)
    assert "token usage (input tokens are counted by ctxlens)" in text, text
