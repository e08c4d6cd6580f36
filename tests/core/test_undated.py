"""``metadata.undated`` (``core/undated.py``, h13f): the ranges, what a reader makes of a
value it does not know, and a trace written in several transactions (a live capture
continuing a stored trace, ``TraceBuilder(trace_id=…)``): one fill for all its undated
messages, the ranges joined, a replayed batch not counted twice."""

from __future__ import annotations

import time
from pathlib import Path

from core.importers.base import ImportContext, TraceBuilder
from core.live.builder import ResumableBuilder
from core.records import NewMessage
from core.store import Store
from core.undated import IMPORT_TIME, TRACE_START, created_recorded, merged, undated_of


def test_ranges_and_lookup() -> None:
    assert merged([(5, 6), (0, 0), (1, 2), (9, 8), (4, 4)]) == ((0, 2), (4, 6))
    und = undated_of(
        {"undated": {"messages": 99, "filled_with": TRACE_START, "at": 7.5,
                     "sequences": [[4, 6], [0, 2]]}}
    )  # fmt: skip
    assert und is not None and und.messages == 6, "the count follows the ranges"
    assert [s for s in range(9) if und.covers(s)] == [0, 1, 2, 4, 5, 6]
    dated = created_recorded({"undated": und.to_json()})
    assert [dated(s) for s in (0, 3, 6, 7)] == [False, True, False, True]
    for junk in (None, [], {"undated": 3}, {"undated": {"at": "x", "sequences": []}}):
        assert undated_of(junk) is None and created_recorded(junk)(0) is True


def test_a_continued_trace_keeps_one_fill(tmp_path: Path) -> None:
    before = time.time()
    with Store.open(tmp_path / "s.db") as store:
        with store.write() as w:
            b = TraceBuilder(w, ImportContext(), "openai", "x")
            tail = b.add(NewMessage("user", "a"), None)
            tail = b.add(NewMessage("assistant", "b", created_at=1_700_000_000.0), tail)
            tail = b.add(NewMessage("user", "c"), tail)
            b.finish()
            tid = b.trace_id
        with store.read() as r:
            first = undated_of(r.trace(tid).metadata)
            times = [m.created_at for m in r.all_messages(tid)]
        assert first is not None and first.filled_with == IMPORT_TIME
        assert before <= first.at <= time.time()
        assert first.sequences == ((0, 0), (2, 2)) and times == [first.at, 1.7e9, first.at]
        with store.write() as w:
            more = ResumableBuilder(w, ImportContext(), "openai", "x", trace_id=tid)
            more.continue_stored()
            more.add(NewMessage("assistant", "d"), 2)
            more.finish()
        with store.write() as w:  # a replay of what is stored, then one more message
            again = ResumableBuilder(w, ImportContext(), "openai", "x", trace_id=tid)
            again.replaying = True
            tail = again.add(NewMessage("user", "a"), None)
            tail = again.add(NewMessage("assistant", "b", created_at=1.7e9), tail)
            tail = again.add(NewMessage("user", "c"), tail)
            tail = again.add(NewMessage("assistant", "d"), tail)
            assert again.matches_store()  # (the live watcher's check: flushes, writes nothing)
            again.replaying = False
            again.add(NewMessage("user", "e", created_at=1_700_000_060.0), tail)
            again.finish()
        with store.read() as r:
            last = undated_of(r.trace(tid).metadata)
            times = [m.created_at for m in r.all_messages(tid)]
    assert last is not None and last.at == first.at and last.filled_with == IMPORT_TIME
    assert last.sequences == ((0, 0), (2, 3)) and last.messages == 3
    assert times == [first.at, 1.7e9, first.at, first.at, 1_700_000_060.0]
