"""``ctxlens traces --json``: the contract keys plus model, start, duration, calls and tokens;
titles that say what a trace was (the request, not the IDE context around it)."""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]
CONTRACT = ["id", "title", "source", "created_at", "messages", "head"]
ADDED = {"model", "start", "duration", "calls", "tokens"}
CODEX_IDE = next(iter(sorted((TRACES / "codex").rglob("rollout-2025-09-24*.jsonl"))), None)
EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*.eval"))), None)
pytestmark = pytest.mark.skipif(CODEX_IDE is None or EVAL is None, reason="no shared traces")


def _rows(cli: Cli, db: Path, *paths: Path) -> list[dict[str, Any]]:
    code, _ = cli("--db", str(db), "import", *map(str, paths), "--json")
    assert code == 0
    code, out = cli("--db", str(db), "traces", "--json")
    assert code == 0
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _first_request(path: Path) -> str:
    """The first user message of the rollout with the IDE context cut off, read raw."""
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        p = rec.get("payload", {})
        if rec.get("type") == "response_item" and p.get("role") == "user":
            text = p["content"][0]["text"]
            if "## My request for Codex:" in text:
                return " ".join(text.split("## My request for Codex:")[1].split())
    raise AssertionError("no IDE request in the rollout")


def test_keys_and_titles(cli: Cli, store_path: Path) -> None:
    assert CODEX_IDE is not None and EVAL is not None
    rows = _rows(cli, store_path, CODEX_IDE, EVAL)
    assert all(list(r)[:6] == CONTRACT and set(r) >= ADDED for r in rows)
    codex = next(r for r in rows if r["source"] == "codex")
    assert not codex["title"].startswith("# Context")
    assert _first_request(CODEX_IDE).startswith(codex["title"].rstrip("…"))
    times = [
        datetime.fromisoformat(json.loads(line)["timestamp"]).timestamp()
        for line in CODEX_IDE.read_text().splitlines()
        if line.strip()
    ]
    assert 0 < codex["duration"] <= max(times) - min(times) + 1e-3, "the span the rollout dated"
    assert min(times) - 1e-3 <= codex["start"]
    assert codex["tokens"] > 0
    samples = [r for r in rows if r["source"] == "inspect"]
    with zipfile.ZipFile(EVAL) as z:
        header = json.loads(z.read("header.json"))
    assert {r["model"] for r in samples} == {header["eval"]["model"]}
    assert all(r["calls"] == 1 for r in samples)
    assert all(r["eval"]["task"] == header["eval"]["task"] for r in samples)
    ids = sorted(int(r["sample"]["id"]) for r in samples)
    assert ids == sorted(header["eval"]["dataset"]["sample_ids"])
    assert all(
        r["title"].startswith(f"{header['eval']['task']} #{r['sample']['id']} ") for r in samples
    )


SPOTTER = next(iter(sorted((TRACES / "claude_code").rglob("258c7280-*.jsonl"))), None)


def _main_model(path: Path) -> str:
    """The model of most main-agent model calls (one per ``message.id``), read raw."""
    per_model: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line) if line.strip() else {}
        msg = rec.get("message") or {}
        if rec.get("type") == "assistant" and not rec.get("isSidechain") and msg.get("model"):
            per_model.setdefault(msg["model"], set()).add(msg.get("id") or rec["uuid"])
    return max(per_model, key=lambda m: len(per_model[m]))


@pytest.mark.skipif(SPOTTER is None, reason="no shared traces")
def test_model_is_the_main_agents_most_called(cli: Cli, store_path: Path) -> None:
    """Not the alphabetically greatest model name of any call (a subagent's Sonnet)."""
    from core.inspector.trace_list import summaries
    from core.store import Store

    assert SPOTTER is not None
    rows = _rows(cli, store_path, SPOTTER)
    want = _main_model(SPOTTER)
    assert [r["model"] for r in rows] == [want]
    with Store.open(str(store_path)) as store, store.read() as r:
        assert [s.model for s in summaries(r)] == [want], "the Traces pane's path agrees"


UNDATED = next(iter(sorted((TRACES / "swe_agent").rglob("pydicom__pydicom-1458.traj"))), None)


@pytest.mark.skipif(UNDATED is None, reason="no shared traces")
def test_a_trace_the_file_did_not_date_is_marked_undated(cli: Cli, store_path: Path) -> None:
    """A SWE-agent trajectory has no timestamps: its start is the import time, and says so
    (the list showed the import time as if the run had started then; the Traces pane's
    side: tests/ui/test_undated_start.py)."""
    assert UNDATED is not None and CODEX_IDE is not None
    assert '"timestamp"' not in UNDATED.read_text(encoding="utf-8")
    dated_by_header = TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log"
    header = dated_by_header / "log_tool_call_error.json"  # only the eval's ``created``
    rows = {r["source"]: r for r in _rows(cli, store_path, UNDATED, CODEX_IDE, header)}
    assert rows["swe-agent"]["start_recorded"] is False and rows["codex"]["start_recorded"]
    created = json.loads(header.read_text(encoding="utf-8"))["eval"]["created"]
    assert rows["inspect"]["start_recorded"] is True, "a date the file gave is recorded"
    assert rows["inspect"]["start"] == datetime.fromisoformat(created).timestamp()


@pytest.mark.skipif(UNDATED is None, reason="no shared traces")
def test_the_text_listing_says_undated_instead_of_the_import_time(
    cli: Cli, store_path: Path
) -> None:
    """``ctxlens traces`` (text) printed the import time in the start column of a trajectory
    that dated nothing, as if the run had started at the import; the JSON row's
    ``start_recorded`` and the Traces pane said otherwise."""
    assert UNDATED is not None and CODEX_IDE is not None
    rows = {r["id"]: r for r in _rows(cli, store_path, UNDATED, CODEX_IDE)}
    code, out = cli("--db", str(store_path), "traces")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    for tid, row in rows.items():
        start_column = lines[tid].split(None, 1)[1]
        if row["start_recorded"]:
            want = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["start"]))
            assert start_column.startswith(want), lines[tid]
        else:
            assert start_column.startswith("undated "), lines[tid]
    assert sorted(r["start_recorded"] for r in rows.values()) == [False, True]
