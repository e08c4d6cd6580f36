"""Review finding 5: the cost a tool recorded (SWE-agent ``model_stats.total_cost``, any-agent
``gen_ai.usage.*_cost``) is shown beside ctxlens's own pricing, named as the tool's, not
replaced by "no price"."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.cost.compute import format_recorded_usd
from tests.app.test_swe_agent_calls_real import PYDICOM
from tests.conftest import TRACES

ANY_AGENT = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
pytestmark = pytest.mark.skipif(not ANY_AGENT.is_file(), reason="shared/traces not present")
Cli = Callable[..., tuple[int, str]]


def _row(cli: Cli, tmp_path: Path, path: Path) -> dict[str, Any]:
    db = str(tmp_path / "r.db")
    assert cli("--db", db, "import", str(path))[0] == 0
    (row,) = json.loads(cli("--db", db, "traces", "--json")[1])
    code, text = cli("--db", db, "traces")
    assert code == 0 and row["cost"]["recorded"] in text
    return row


def test_swe_agent_model_stats_cost_is_shown_as_recorded(cli: Cli, tmp_path: Path) -> None:
    raw = json.loads(PYDICOM.read_text(encoding="utf-8"))["info"]["model_stats"]
    row = _row(cli, tmp_path, PYDICOM)
    # this instance's cost: ``total_cost`` is the batch's running total (equal here, the
    # batch's first instance)
    assert row["cost"]["recorded"] == (
        f"SWE-agent recorded {format_recorded_usd(raw['instance_cost'])}"
    )


def test_any_agent_span_costs_are_shown_as_recorded(cli: Cli, tmp_path: Path) -> None:
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    usd = sum(float(s["attributes"].get(f"gen_ai.usage.{k}_cost", 0))
              for s in spans for k in ("input", "output"))  # fmt: skip
    row = _row(cli, tmp_path, ANY_AGENT)
    assert usd > 0
    assert row["cost"]["recorded"] == f"OTel gen_ai.usage recorded {format_recorded_usd(usd)}"
    # the recorded cost keeps its digits: it read "$0.0001" for the $0.000125 recorded
    shown = float(row["cost"]["recorded"].rsplit("$", 1)[1])
    assert abs(shown - usd) <= 0.005 * usd, (shown, usd)
