"""Token counts filled in after an import (``core/importers/counting.py:fill_pending``).

An import commits its messages with pending counts; readers count them on the fly until
``fill_pending`` stores them (the store side: ``tests/core/test_store_pending_counts.py``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import select

from core.errors import ImportCancelled
from core.importers import counting
from core.importers.api import import_paths
from core.importers.counting import fill_pending, pending
from core.store import Store
from core.store import schema as t
from core.store.triggers import PENDING_TOKENS
from core.tokens.counter import TokenCounter

FIXTURE = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"


def _stored(store: Store, trace_id: str) -> dict[int, int]:
    m = t.messages.c
    with store.read() as r:
        return dict(
            r.conn.execute(select(m.sequence, m.token_count).where(m.trace_id == trace_id)).all()
        )


def _expected(store: Store, trace_id: str) -> dict[int, int]:
    """Counted here from the stored texts, independently of the importer and the reader."""
    c = TokenCounter()
    with store.read() as r:
        r.count_pending = False
        return {
            m.sequence: 0
            if m.kind == "meta"
            else c.count_message(m.role, m.content, m.tool_calls, m.name).tokens
            for m in r.all_messages(trace_id)
        }


def test_import_leaves_counts_pending_and_readers_count_them(store: Store) -> None:
    (res,) = import_paths(store, [FIXTURE])
    stored = _stored(store, res.trace_id)
    expected = _expected(store, res.trace_id)
    assert PENDING_TOKENS in stored.values(), "an import does not count"
    assert all(stored[s] == 0 for s, n in expected.items() if n == 0)
    with store.read() as r:
        read = {m.sequence: m.token_count for m in r.all_messages(res.trace_id)}
        page = r.main_path_page(res.trace_id, 0, 1000)
    assert read == expected
    assert all(m.token_count == expected[m.sequence] for m in page)
    assert fill_pending(store, [res.trace_id]) == pending_before(stored)
    assert _stored(store, res.trace_id) == expected
    assert pending(store, res.trace_id) == 0


def pending_before(stored: dict[int, int]) -> int:
    return sum(1 for n in stored.values() if n == PENDING_TOKENS)


def test_fill_in_batches_with_progress_and_a_cancel_keeps_what_is_done(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    (res,) = import_paths(store, [FIXTURE])
    todo = pending(store, res.trace_id)
    assert todo > 4
    monkeypatch.setattr(counting, "BATCH", 2)
    cancel = threading.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done >= 4:
            cancel.set()

    with pytest.raises(ImportCancelled):
        fill_pending(store, [res.trace_id], progress=progress, cancel=cancel)
    left = pending(store, res.trace_id)
    assert seen[0] == (2, todo) and 0 < left <= todo - 4
    assert fill_pending(store, [res.trace_id]) == left
    assert _stored(store, res.trace_id) == _expected(store, res.trace_id)


def _all_stored(store: Store) -> dict[tuple[str, int], int]:
    m = t.messages.c
    with store.read() as r:
        rows = r.conn.execute(select(m.trace_id, m.sequence, m.token_count)).all()
    return {(tid, seq): n for tid, seq, n in rows}


@pytest.mark.parametrize("small", [False, True], ids=["defaults", "small-jobs-and-holds"])
def test_counted_ahead_rows_are_written_with_their_exact_counts(
    store: Store, small: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ctxlens import``'s way: counted while read, so nothing is pending after the
    commit and no row is updated; the counts are the ones counted from the stored texts.
    Small jobs and a small hold limit make chains wait for counts and for each other."""
    from core.importers.base import TraceBuilder

    if small:
        monkeypatch.setattr(counting.CountsAhead, "CHUNK", 64)
        monkeypatch.setattr(TraceBuilder, "HELD_CHARS", 200)
    sources = [FIXTURE, *sorted((FIXTURE.parents[1]).glob("codex/*.jsonl"))]
    with counting.CountsAhead() as ahead:
        results = import_paths(store, sources, counts=ahead)
    assert results and {r.trace_id for r in results} == ahead.complete
    for res in results:
        assert pending(store, res.trace_id) == 0, "every row was written counted"
        assert _stored(store, res.trace_id) == _expected(store, res.trace_id)
    _hashes_are_the_views(store, [r.trace_id for r in results])


def test_counted_ahead_on_the_threads_own_encodings_are_exact(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counting threads encode with encodings of their own once they have encoded
    ``OWN_AFTER_CHARS`` (here at once): the stored counts are still the texts' own."""
    from core.tokens import encodings

    monkeypatch.setattr(encodings, "OWN_AFTER_CHARS", 0)
    with counting.CountsAhead() as ahead:
        (res,) = import_paths(store, [FIXTURE], counts=ahead)
        assert ahead._counter.own_encoding
    assert pending(store, res.trace_id) == 0
    assert _stored(store, res.trace_id) == _expected(store, res.trace_id)


def test_first_jobs_are_small_and_a_waited_for_queue_goes_out_as_two() -> None:
    """The workers get a job after ``FIRST_CHUNK`` characters (not after a whole
    ``CHUNK``), and a queue the importer waits for is cut in two jobs of about equal text,
    so both workers count the tail; every count is still ``count_messages``'s own."""
    from core.records import NewMessage, ToolCall

    texts = [f"line {i}: " + "word " * (40 + i % 13) for i in range(60)]
    msgs = [NewMessage("user", t) for t in texts]
    msgs.append(NewMessage("assistant", "", tool_calls=(ToolCall("c1", "Bash", '{"a": 1}'),)))
    chars = [len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in msgs]
    with counting.CountsAhead() as ahead:
        first = next(i for i in range(len(msgs)) if sum(chars[: i + 1]) >= ahead.FIRST_CHUNK)
        tickets = [ahead.take(m) for m in msgs[: first + 1]]
        assert len(ahead._starts) == 1, "the first job went out at FIRST_CHUNK characters"
        tickets += [ahead.take(m) for m in msgs[first + 1 :]]
        queued = sum(chars[first + 1 :])
        assert ahead.SPLIT_CHARS <= queued < 2 * ahead.FIRST_CHUNK, "a tail still queued"
        got = [ahead.count(n) for n in tickets]
        assert len(ahead._starts) == 3, "the waited-for tail went out as two jobs"
    expected = TokenCounter().count_messages(
        [(m.role, m.content, m.tool_calls, m.name) for m in msgs]
    )
    assert got == expected


def test_import_counted_matches_import_then_fill_on_every_format(tmp_path: Path) -> None:
    """The same counts either way, for every fixture format (traces an importer writes
    without the builder are filled after the commit, as before)."""
    from core.importers.api import import_counted

    fixtures = Path(__file__).parents[2] / "fixtures"
    with Store.open(tmp_path / "a.db") as a, Store.open(tmp_path / "b.db") as b:
        old = import_paths(a, [fixtures], stop_on_error=False)
        fill_pending(a, [r.trace_id for r in old if not (r.error or r.duplicate)])
        new = import_counted(b, [fixtures], stop_on_error=False)
        assert [(r.path, r.messages, r.error) for r in new] == [
            (r.path, r.messages, r.error) for r in old
        ]
        assert len({r.format for r in new if not r.error}) >= 6
        ids = {x.trace_id: y.trace_id for x, y in zip(old, new, strict=True) if x.trace_id}
        before, after = _all_stored(a), _all_stored(b)
        assert {(ids[tid], seq): n for (tid, seq), n in before.items()} == after
        assert PENDING_TOKENS not in after.values()
        calls_before, calls_after = _calls(a), _calls(b)
        assert len(calls_after) > 20, "the fixtures record model calls"
        assert {(ids[tid], *rest) for tid, *rest in calls_before} == set(calls_after)
        _hashes_are_the_views(b, list(ids.values()))


def _calls(store: Store) -> list[tuple[object, ...]]:
    """Each call's trace, index, head and stored context."""
    c = t.llm_calls.c
    with store.read() as r:
        rows = r.conn.execute(select(c.trace_id, c.call_index, c.context, c.head_sequence)).all()
    return [(tid, i, repr(ctx), head) for tid, i, ctx, head in rows]


def _hashes_are_the_views(store: Store, trace_ids: list[str]) -> None:
    """A counted import hashes its calls while chains wait for their counts (rendered from
    memory): each hash is still ``request_sha256`` of the View the store gives. (Hashes are
    not compared across stores: a ref's id, inside the request, names its trace.)"""
    from core.context.view import request_sha256, resolve

    with store.read() as r:
        calls = [(tid, call) for tid in trace_ids for call in r.llm_calls(tid)]
        for tid, call in calls:
            view = resolve(r, tid, call.context)
            assert call.request_sha256 == request_sha256(view.openai()), (tid, call.call_index)


def test_counted_import_encodes_each_message_text_once_and_nothing_else(
    store: Store,
) -> None:
    """The counting cost of ``ctxlens import`` is tiktoken's, so what it encodes is pinned:
    every text a stored count needs (content, name, each call's name and arguments), a
    repeated one at most as often as it occurs (concurrent jobs may each miss the memo),
    and no other text (no call's rebuilt context or boundary is counted again: their
    figures are sums of the stored counts; the process-wide counter encodes nothing)."""
    from core.tokens.counter import default_counter
    from tests.conftest import TRACES

    files = [p for p in (TRACES / "claude_code").rglob("*.jsonl") if "subagents" not in p.parts]
    if not files:
        pytest.skip("shared/traces not present")
    session = max(files, key=lambda p: p.stat().st_size)
    shared_before = default_counter().encoded_chars
    with counting.CountsAhead() as ahead:
        results = import_paths(store, [session], counts=ahead)
    texts: list[str] = []
    with store.read() as r:
        for res in results:
            for m in r.all_messages(res.trace_id):
                if m.kind in counting.NOT_COUNTED:
                    continue
                texts += [m.content, m.name or ""]
                texts += [x for c in m.tool_calls for x in (c.name, c.arguments)]
    distinct = sum(len(x) for x in set(texts))
    assert distinct > 100_000, "the session holds text to count"
    assert distinct <= ahead.encoded_chars <= sum(len(x) for x in texts)
    assert default_counter().encoded_chars == shared_before


def _busy_workers() -> tuple[threading.Event, list[object]]:
    """Both counting threads held on an event: jobs sent meanwhile wait in the pool."""
    release = threading.Event()
    started = threading.Barrier(counting.WORKERS + 1)

    def hold() -> None:
        started.wait(timeout=10)
        release.wait(timeout=10)

    pool = counting._COUNTING.get()
    held = [pool.submit(hold) for _ in range(counting.WORKERS)]
    started.wait(timeout=10)
    return release, held


def test_a_count_the_importer_waits_for_sends_the_queue_first() -> None:
    """The importer waits for an earlier job (its last rows, at ``finish``): the texts still
    queued go to the workers before it blocks, not once the wait is over (then the last
    job was counted after everything else, with both workers idle meanwhile)."""
    from core.records import NewMessage

    msgs = [NewMessage("user", f"{i} " + "text " * 400) for i in range(8)]
    release, held = _busy_workers()
    try:
        with counting.CountsAhead() as ahead:
            tickets = [ahead.take(m) for m in msgs]
            assert len(ahead._starts) == 1 and ahead._queued, "one job sent, a tail queued"
            got: list[int] = []
            waiter = threading.Thread(target=lambda: got.append(ahead.count(tickets[0])))
            waiter.start()
            for _ in range(1000):  # the waiter sends the queue, then blocks on its job
                if not ahead._queued:
                    break
                threading.Event().wait(0.01)
            assert not ahead._queued, "the queue went out while the importer waited"
            assert not got, "the first job is still held"
            release.set()
            waiter.join(timeout=10)
            got += [ahead.count(n) for n in tickets[1:]]
    finally:
        release.set()
        for job in held:
            job.result(timeout=10)  # type: ignore[attr-defined]
    expected = TokenCounter().count_messages([(m.role, m.content, (), None) for m in msgs])
    assert got == expected


def test_a_job_for_an_idle_worker_hands_it_the_gil(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a worker is idle the importer sleeps ``HANDOVER`` after sending a job (the
    worker needs the GIL to start); with every worker given a job it does not."""
    from core.records import NewMessage

    naps: list[float] = []
    monkeypatch.setattr(counting.CountsAhead, "_hand_over", lambda self: naps.append(1.0))
    release, held = _busy_workers()
    try:
        with counting.CountsAhead() as ahead:
            chunk = ahead.FIRST_CHUNK
            for i in range(counting.WORKERS + 2):
                ahead.take(NewMessage("user", f"{i}" + "x" * (chunk << i)))
            assert len(ahead._starts) == counting.WORKERS + 2
            assert naps == [1.0] * counting.WORKERS, "one hand-over per idle worker"
            release.set()
    finally:
        release.set()
        for job in held:
            job.result(timeout=10)  # type: ignore[attr-defined]
