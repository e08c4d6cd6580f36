"""Review 13b, finding 4: a SWE-agent trajectory's ``info.model_stats`` (this instance's
``tokens_sent``, ``tokens_received``, ``instance_cost``, ``api_calls``) are the run's
recorded totals: ``ctxlens traces --json`` and ``show --json`` give them as
``recorded_totals`` (the playback strip's words:
``tests/ui/test_imported_swe_agent_totals_gui.py``).

Expected values are read from the raw trajectories with plain ``json``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]
PYDICOM = next(iter(sorted((TRACES / "swe_agent").rglob("pydicom__pydicom-1458.traj"))), None)
MARSHMALLOW = next(
    iter(sorted((TRACES / "swe_agent").rglob("marshmallow-code__marshmallow-1867.traj"))), None
)
pytestmark = pytest.mark.skipif(PYDICOM is None, reason="shared/traces not present")


def _imported(cli: Cli, tmp_path: Path, path: Path) -> tuple[str, dict[str, Any]]:
    db = str(tmp_path / "t.db")
    code, out = cli("--db", db, "import", str(path), "--json")
    assert code == 0, out
    (row,) = json.loads(cli("--db", db, "traces", "--json")[1])
    return db, row


def _expected(path: Path) -> dict[str, Any]:
    stats = json.loads(path.read_text(encoding="utf-8"))["info"]["model_stats"]
    return {
        "input_tokens": stats["tokens_sent"],
        "output_tokens": stats["tokens_received"],
        "cost_usd": stats["instance_cost"],
        "calls": stats["api_calls"],
        "source": "SWE-agent info.model_stats",
    }


def test_pydicom_model_stats_are_the_recorded_totals(cli: Cli, tmp_path: Path) -> None:
    assert PYDICOM is not None
    want = _expected(PYDICOM)
    assert (want["input_tokens"], want["output_tokens"]) == (122612, 1369)
    db, row = _imported(cli, tmp_path, PYDICOM)
    assert row["recorded_totals"] == want
    code, out = cli("--db", db, "show", row["id"], "--json")
    assert code == 0 and json.loads(out)["trace"]["recorded_totals"] == want


@pytest.mark.skipif(MARSHMALLOW is None, reason="shared/traces not present")
def test_a_replay_records_its_zeros_as_they_are(cli: Cli, tmp_path: Path) -> None:
    assert MARSHMALLOW is not None
    want = _expected(MARSHMALLOW)
    assert want["input_tokens"] == want["output_tokens"] == 0 < want["calls"]
    _db, row = _imported(cli, tmp_path, MARSHMALLOW)
    assert row["recorded_totals"] == want, "as recorded, zeros included"
