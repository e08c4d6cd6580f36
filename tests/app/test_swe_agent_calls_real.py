"""Review finding 6: a SWE-agent 0.x trajectory (no per-step contexts) has the model calls
its ``model_stats`` counts, and the trace list, the playback strip and ``context --call``
agree on them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.replay.playback import Playback
from core.store import Store
from tests.conftest import TRACES
from tests.helpers.playback import main_positions

PYDICOM = (
    TRACES / "swe_agent/SWE-agent__SWE-agent/tests/test_data/trajectories"
    / "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"
    / "pydicom__pydicom-1458.traj"
)  # fmt: skip
pytestmark = pytest.mark.skipif(not PYDICOM.is_file(), reason="shared/traces not present")


def test_model_stats_calls_are_the_calls_everywhere(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    raw = json.loads(PYDICOM.read_text(encoding="utf-8"))
    api_calls = raw["info"]["model_stats"]["api_calls"]
    db = tmp_path / "s.db"
    code, out = cli("--db", str(db), "import", str(PYDICOM))
    assert code == 0 and "warning" not in out.lower()
    (row,) = json.loads(cli("--db", str(db), "traces", "--json")[1])
    assert row["calls"] == api_calls > 0
    with Store.open(db) as s, s.read() as r:
        strip = main_positions(Playback.open(r, row["id"]))
    assert len(strip) == api_calls
    replies = [m for m in raw["history"] if m["role"] == "assistant"]
    for n in (0, api_calls - 1):
        code, out = cli("--db", str(db), "context", row["id"], "--call", str(n), "--json")
        data = json.loads(out)
        assert code == 0 and data["context"] == "reconstructed"
        assert data["messages"][-1]["role"] != "assistant"  # the history before reply n
    code, out = cli("--db", str(db), "context", row["id"], "--call", str(api_calls - 1), "--json")
    last = json.loads(out)["messages"]
    assert len(last) == len(raw["history"]) - 1 and len(replies) == api_calls
