"""Issue 17: one numbering of a trace's model calls after a rewind (core/inspector/call_numbers.py),
on the sample store (it holds a rewind) and after a further rewind through the Store."""

from __future__ import annotations

from core.inspector.call_numbers import (
    ABANDONED,
    CallNumbering,
    call_choices,
    recorded_numbering,
)
from core.inspector.context_report import last_call_diff, numbered_call_report
from core.replay.calls import live_calls, trace_calls
from core.store import Store
from core.store.reader import Reader
from tests.sample_trace import write_long_trace, write_sample


def _scrubbers(r: Reader, trace_id: str) -> CallNumbering:
    """The numbering the scrubber uses (``PlaybackFrames.open``: over every call)."""
    return CallNumbering.of(r, trace_id, trace_calls(r, trace_id))


def test_current_calls_are_numbered_in_order_and_abandoned_ones_named(store: Store) -> None:
    trace_id = write_sample(store).id
    store.rewind(trace_id, 20)
    with store.read() as r:
        calls = trace_calls(r, trace_id)
        live = [c.position for c in live_calls(r, trace_id, calls)]
        numbering = _scrubbers(r, trace_id)
        choices = call_choices(r, trace_id)
        last = numbering.last_current()
        assert last is not None and last.call.call_index is not None
        report, diff = numbered_call_report(r, trace_id, last.call.call_index)
        next_diff = last_call_diff(r, trace_id)
        gone = next(n for n in numbering.calls if n.abandoned)
        assert gone.call.call_index is not None
        gone_report, _ = numbered_call_report(r, trace_id, gone.call.call_index)
    assert [n.call.position for n in numbering.calls if not n.abandoned] == live
    assert [n.number for n in numbering.calls if not n.abandoned] == list(range(len(live)))
    assert numbering.total == len(live) and numbering.abandoned == len(calls) - len(live) > 0
    assert (
        numbering.abandoned_note() == f"{numbering.abandoned:,} calls {ABANDONED}: not played back"
    )
    assert [c.abandoned for c in choices] == sorted(c.abandoned for c in choices)
    assert report.label == f"call {len(live) - 1} of 0–{len(live) - 1}"
    assert gone_report.label == f"a call {ABANDONED}"
    assert diff is not None and diff.before_label == f"call {len(live) - 1}"
    assert diff.after_label == "next call" and next_diff == diff


def test_a_trace_without_call_records_lists_no_calls_and_derives_none(store: Store) -> None:
    """The Context pane lists recorded calls only: for a long imported-like trace it must
    not number a derived call per assistant message (minutes at 1M messages) to list none."""
    trace_id = write_long_trace(store, 400).id
    with store.read() as r:
        derived = _scrubbers(r, trace_id)  # the scrubber's numbering derives them
        recorded = recorded_numbering(r, trace_id)
        choices = call_choices(r, trace_id)
        next_diff = last_call_diff(r, trace_id)
    assert derived.total > 0 and not any(n.call.recorded for n in derived.calls)
    assert recorded.calls == () and recorded.total == 0
    assert choices == [] and next_diff is None


def test_the_recorded_numbering_is_the_numbering_of_a_recording_trace(store: Store) -> None:
    trace_id = write_sample(store).id
    store.rewind(trace_id, 20)
    with store.read() as r:
        assert recorded_numbering(r, trace_id) == _scrubbers(r, trace_id)
