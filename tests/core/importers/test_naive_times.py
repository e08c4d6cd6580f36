"""Times without a zone (``core/importers/times.py``): read as UTC wherever ctxlens runs,
at the recording machine's offset where the file's absolute times give it (the nearest
quarter hour most pairs agree on), and said so in ``time_basis``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from core.importers.api import import_paths
from core.importers.times import (
    UNKNOWN_ZONE,
    SourceClock,
    local_offset,
    naive_times_read,
    offset_text,
    parse_time,
)
from core.store import Store
from tests.conftest import TRACES

BASIC = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process in Asia/Tokyo (UTC+09:00), as a viewer there runs ctxlens."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    assert time.localtime(0).tm_hour == 9
    yield
    monkeypatch.undo()
    time.tzset()


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_a_naive_time_is_read_as_utc_on_any_machine(tokyo: None) -> None:
    before = naive_times_read()
    assert parse_time("2025-01-27T22:44:56.900854") == _utc("2025-01-27T22:44:56.900854")
    assert naive_times_read() == before + 1, "counted, so the trace can say so"
    for aware in ("2025-01-28T06:44:56.900854Z", "2025-01-28T07:44:56.900854+01:00"):
        assert parse_time(aware) == _utc("2025-01-28T06:44:56.900854")
    assert parse_time(1738046713) == 1738046713.0
    assert parse_time(1738046713_000) == 1738046713.0
    assert parse_time("1738046713") == 1738046713.0
    assert naive_times_read() == before + 1, "times with a zone, or epoch numbers, are not"
    assert parse_time("yesterday") is None and parse_time(None) is None


def test_the_offset_is_the_nearest_quarter_hour_most_pairs_agree_on() -> None:
    pst = -8 * 3600
    created = 1738046713.0
    # replies written 0.8 s and 6 min after their response was created: both UTC−08:00
    pairs = [(created + pst + 0.8, created), (created + pst + 360, created + 10)]
    found = local_offset(pairs, "llm response created")
    assert found is not None and (found.minutes, found.pairs, found.agreeing) == (-480, 2, 2)
    # one slow reply (10 min: nearer −07:45) is outvoted
    slow = [*pairs, (created + pst + 600, created)]
    found = local_offset(slow, "x")
    assert found is not None and (found.minutes, found.pairs, found.agreeing) == (-480, 3, 2)
    # zones off the hour
    for minutes in (330, 345, -570, 840, -720):
        found = local_offset([(created + minutes * 60 + 2, created)], "x")
        assert found is not None and found.minutes == minutes
    # a difference no zone has is not an offset
    assert local_offset([(created + 15 * 3600, created)], "x") is None
    assert local_offset([], "x") is None
    # a tie goes to the offset whose pair lies closest to it
    tie = [(created + pst + 100, created), (created - 7 * 3600 + 1, created)]
    found = local_offset(tie, "x")
    assert found is not None and (found.minutes, found.agreeing) == (-420, 1)


def test_the_clock_shifts_naive_times_only(tokyo: None) -> None:
    found = local_offset([(_utc("2025-01-27T22:45:14"), 1738046713.0)], "llm response created")
    clock = SourceClock(found)
    assert clock.read("2025-01-27T22:44:56.900854") == pytest.approx(1738046696.900854)
    assert clock.read("2025-01-28T06:44:56.900854Z") == pytest.approx(1738046696.900854)
    assert clock.read(1738046713) == 1738046713.0
    assert clock.read(None) is None
    assert clock.basis() == {
        "naive": True,
        "offset_minutes": -480,
        "from": "llm response created",
        "pairs": 1,
        "agreeing": 1,
    }
    unknown = SourceClock()
    assert unknown.read("2026-02-18T19:10:19.390505") == _utc("2026-02-18T19:10:19.390505")
    assert unknown.basis() == UNKNOWN_ZONE
    aware = SourceClock()
    aware.read("2026-02-18T19:10:19Z")
    assert aware.basis() is None, "times with their zone need no basis"
    assert [offset_text(m) for m in (-480, 0, 345, -570)] == [
        "UTC−08:00",
        "UTC",
        "UTC+05:45",
        "UTC−09:30",
    ]


@pytest.mark.skipif(not BASIC.is_file(), reason="shared/traces not present")
def test_responses_that_disagree_on_the_offset_are_a_warning(tmp_path: Path) -> None:
    """A trajectory whose second response was created an hour later than its event time
    says (a clock change during the run, say): the offset is still one of them, said
    with how many agreed, and the import warns."""
    events: list[dict[str, Any]] = json.loads(BASIC.read_text(encoding="utf-8"))
    last = events[-1]["tool_call_metadata"]["model_response"]
    last["created"] -= 3600
    changed = tmp_path / "clock-change.json"
    changed.write_text(json.dumps(events), encoding="utf-8")
    with Store.open(tmp_path / "s.db") as store:
        (res,) = import_paths(store, [changed])
        with store.read() as r:
            basis = r.trace(res.trace_id).metadata["time_basis"]
    assert basis["pairs"] == 2 and basis["agreeing"] == 1
    assert basis["offset_minutes"] in (-480, -420)
    (warning,) = [w for w in res.warnings if "times have no zone" in w]
    assert "1 of 2 model responses put the recording machine at UTC" in warning
    assert "1 at another offset (a clock change during the run?)" in warning
