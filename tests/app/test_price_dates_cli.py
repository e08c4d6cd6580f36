"""Screenshot review (h13c), findings 4 and 6 through the CLI, on the real spotter Claude Code
session: the price table's date is never older than a row it prices with (the table said
2025-11-24 while ``claude-opus-4-6`` was priced from its row of 2026-02-05), each model's
cost names the date of the row that priced it, and a trace row carries the tokens its
calls recorded beside the transcript's (summed here from the raw files)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.cost.table import normalize_model
from tests.app.test_cost_cli import PRICES
from tests.helpers.raw_usage import SPOTTER as SESSION
from tests.helpers.raw_usage import recorded_usage

pytestmark = pytest.mark.skipif(not SESSION.is_file(), reason="shared/traces not present")
Cli = Callable[..., tuple[int, str]]


def test_prices_are_dated_by_the_row_that_priced_them(cli: Cli, tmp_path: Path) -> None:
    table = json.loads(PRICES.read_text(encoding="utf-8"))
    rows = {normalize_model(r["model"]): r["date"] for r in table["models"]}
    db = str(tmp_path / "cc.db")
    assert cli("--db", db, "import", str(SESSION))[0] == 0
    code, out = cli("--db", db, "traces", "--json")
    assert code == 0
    (row,) = json.loads(out)
    cost = row["cost"]
    assert cost["priced_calls"] == row["calls"]
    dates = cost["price_dates"]
    assert set(dates) == set(cost["by_model"])
    for model, date in dates.items():
        assert date == rows[normalize_model(model)], model
    assert cost["table_date"] >= max(dates.values()), "the table is not older than its rows"
    assert cost["table_date"] == max(r["date"] for r in table["models"])
    # the usage the calls recorded, beside the transcript's own count
    assert row["recorded_tokens"] == recorded_usage(SESSION)
    assert row["recorded_tokens"] > 50 * row["tokens"]
