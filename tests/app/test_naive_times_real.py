"""Review 13e: OpenHands writes its event times without a zone ("2025-01-27T22:44:56.900854")
and ctxlens read them in the zone of the machine running it, so the trajectory
``basic.json`` started 8 h away from the ``created`` times its own model responses record,
and the stored times changed with the machine. Now they are the same on every machine:
a naive time is read at the offset the file's absolute times give (V0: each model
response's ``created``, epoch seconds), else as UTC and marked (``time_basis``).

Each import runs as a real ``ctxlens`` process under ``TZ=UTC`` and ``TZ=Asia/Tokyo``;
the stored times (``traces --json``, ``show --json``) are equal between the two and to
what this test computes from the raw files with plain ``json`` and ``datetime``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES
from tests.helpers.ctxlens_process import child_env, run

OPENHANDS = TRACES / "openhands"
BASIC = OPENHANDS / "All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
CLI = next(iter(sorted(OPENHANDS.glob("OpenHands__OpenHands-CLI/tests/trajectories/*/*"))), None)
EVENTS = OPENHANDS / "OpenHands__software-agent-sdk/tests/sdk/conversation/goal/fixtures"
EVENTS = EVENTS / "events.jsonl"
CODEX = next(iter(sorted((TRACES / "codex").rglob("rollout-2026-05-11*.jsonl"))), None)
LITELLM = next(iter(sorted((TRACES / "chat_messages").rglob("litellm_proxy__*.json"))), None)
ZONES = ("UTC", "Asia/Tokyo")
UNKNOWN = {"naive": True, "offset_minutes": None, "from": None}
pytestmark = pytest.mark.skipif(
    not BASIC.is_file() or CLI is None or CODEX is None or LITELLM is None,
    reason="shared/traces not present",
)

# -- what the raw files say ----------------------------------------------------------------


def _as_utc(text: str) -> float:
    """A naive ISO time read as if it were UTC (the wall clock as epoch seconds)."""
    when = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")
    return when.replace(tzinfo=UTC).timestamp()


def _basic() -> tuple[list[dict[str, Any]], int, int]:
    """The trajectory's events, the recording machine's UTC offset in seconds (the nearest
    quarter hour between each model response's ``created`` and the naive time of the
    first event carrying it; they all agree) and how many responses gave one."""
    events = json.loads(BASIC.read_text(encoding="utf-8"))
    first: dict[str, dict[str, Any]] = {}
    for ev in events:
        response = ev.get("tool_call_metadata", {}).get("model_response")
        if response and response["id"] not in first:
            first[response["id"]] = ev
    created = {
        rid: ev["tool_call_metadata"]["model_response"]["created"] for rid, ev in first.items()
    }
    offsets = {
        round((_as_utc(ev["timestamp"]) - created[rid]) / 900) * 900 for rid, ev in first.items()
    }
    (offset,) = offsets
    return events, offset, len(first)


def _cli_times() -> list[float]:
    assert CLI is not None
    return sorted(
        _as_utc(json.loads(p.read_text(encoding="utf-8"))["timestamp"])
        for p in CLI.glob("event-*.json")
    )


def _jsonl_times(path: Path) -> list[float]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return sorted(_as_utc(json.loads(line)["timestamp"]) for line in lines if line.strip())


# -- what ctxlens stores, under each zone ---------------------------------------------------


def _ctxlens(tz: str, *args: str) -> Any:
    res = run(*args, env=child_env(TZ=tz))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


NAIVE_LOG = {
    "messages": [{"role": "user", "content": "What is 2 + 2?"}],
    "response": {
        "model": "gpt-4o",
        "choices": [{"message": {"role": "assistant", "content": "4"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1},
    },
    "timestamp": "2025-03-04T05:06:07.250000",
}
"""A completion log as OpenHands writes them, but with a naive ``timestamp`` (the real
one beside it, ``LITELLM``, records epoch seconds): nothing in it gives the zone."""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Per zone: ``rows`` (path → its ``traces --json`` row) and ``shown`` (path → the
    ``show --json`` messages of its trace)."""
    assert CLI is not None and CODEX is not None and LITELLM is not None
    folder = tmp_path_factory.mktemp("naive")
    log = folder / "naive-completion-log.json"
    log.write_text(json.dumps(NAIVE_LOG), encoding="utf-8")
    paths = [BASIC, CLI, EVENTS, CODEX, LITELLM, log]
    out: dict[str, dict[str, Any]] = {}
    for tz in ZONES:
        db = str(folder / f"{tz.replace('/', '-')}.db")
        imported = _ctxlens(tz, "--db", db, "import", *map(str, paths), "--json")
        ids = {r["path"]: r["trace_id"] for r in imported}
        rows = {r["id"]: r for r in _ctxlens(tz, "--db", db, "traces", "--json")}
        shown = {
            p: _ctxlens(tz, "--db", db, "show", ids[p], "--json") for p in (str(BASIC), str(CLI))
        }
        out[tz] = {"rows": {p: rows[tid] for p, tid in ids.items()}, "shown": shown}
    return out


def _same_in_every_zone(stored: dict[str, dict[str, Any]], key: str, path: Path) -> Any:
    values = [stored[tz][key][str(path)] for tz in ZONES]
    if key == "rows":  # the ids differ between the two stores; nothing else may
        values = [{k: v for k, v in row.items() if k != "id"} for row in values]
    else:
        values = [
            {"trace": {k: v for k, v in s["trace"].items() if k != "id"}, "messages": s["messages"]}
            for s in values
        ]
    assert values[0] == values[1], f"{path.name}: stored differently under {ZONES}"
    return stored[ZONES[0]][key][str(path)]


def test_v0_times_are_read_at_the_offset_the_model_responses_give(
    stored: dict[str, dict[str, Any]],
) -> None:
    events, offset, responses = _basic()
    assert offset == -8 * 3600, "the run's machine was at UTC−08:00"
    row = _same_in_every_zone(stored, "rows", BASIC)
    times = [_as_utc(ev["timestamp"]) - offset for ev in events]
    assert row["start"] == pytest.approx(min(times), abs=1e-6)
    assert row["created_at"] == pytest.approx(min(times), abs=1e-6)
    assert row["duration"] == pytest.approx(max(times) - min(times), abs=1e-6)
    assert row["start_recorded"] is True
    assert row["time_basis"] == {
        "naive": True,
        "offset_minutes": offset // 60,
        "from": "llm response created",
        "pairs": responses,
        "agreeing": responses,
    }
    shown = _same_in_every_zone(stored, "shown", BASIC)
    assert shown["trace"]["time_basis"] == row["time_basis"]
    # one message per event here (request, edit, its result, finish), each at its time
    got = sorted(m["created_at"] for m in shown["messages"])
    assert got == pytest.approx(sorted(times), abs=1e-6)
    # the replies now sit within seconds after the ``created`` of their responses
    for ev in events:
        response = ev.get("tool_call_metadata", {}).get("model_response")
        if response and "action" in ev:
            stored_time = _as_utc(ev["timestamp"]) - offset
            assert 0 <= stored_time - response["created"] < 60


def test_v1_times_have_nothing_absolute_so_they_are_read_as_utc_and_marked(
    stored: dict[str, dict[str, Any]],
) -> None:
    assert CLI is not None
    for path, times in ((CLI, _cli_times()), (EVENTS, _jsonl_times(EVENTS))):
        row = _same_in_every_zone(stored, "rows", path)
        assert row["time_basis"] == UNKNOWN, path.name
        assert row["start"] == pytest.approx(times[0], abs=1e-6), path.name
        assert row["duration"] == pytest.approx(times[-1] - times[0], abs=1e-6), path.name
    shown = _same_in_every_zone(stored, "shown", CLI)
    assert shown["trace"]["time_basis"] == UNKNOWN
    cli = _cli_times()
    for m in shown["messages"]:  # every message at the wall clock of an event, as UTC
        assert min(abs(m["created_at"] - t) for t in cli) < 1e-6, m["sequence"]


def test_times_with_a_zone_or_epoch_seconds_are_not_marked(
    stored: dict[str, dict[str, Any]],
) -> None:
    assert CODEX is not None and LITELLM is not None
    codex = _same_in_every_zone(stored, "rows", CODEX)
    stamps = [
        datetime.fromisoformat(json.loads(line)["timestamp"]).timestamp()
        for line in CODEX.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert codex["time_basis"] is None
    assert min(stamps) - 1e-3 <= codex["start"] <= max(stamps)
    litellm = _same_in_every_zone(stored, "rows", LITELLM)
    assert litellm["time_basis"] is None
    raw = json.loads(LITELLM.read_text(encoding="utf-8"))["timestamp"]
    assert isinstance(raw, float) and litellm["start"] == pytest.approx(raw, abs=1e-6)


def test_a_naive_time_in_another_format_is_read_as_utc_and_marked(
    stored: dict[str, dict[str, Any]],
) -> None:
    """The builder marks any trace whose importer read a naive time and found no zone."""
    rows = {tz: next(r for p, r in stored[tz]["rows"].items() if p.endswith("log.json"))
            for tz in ZONES}  # fmt: skip
    utc, tokyo = rows[ZONES[0]], rows[ZONES[1]]
    want = _as_utc(str(NAIVE_LOG["timestamp"]))
    assert utc["start"] == tokyo["start"] == pytest.approx(want, abs=1e-6)
    assert utc["time_basis"] == tokyo["time_basis"] == UNKNOWN
