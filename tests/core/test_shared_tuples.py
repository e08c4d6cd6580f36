"""The tuple-like sequences a layer hands over instead of a flat copy (issue 20): each must
read exactly as the tuple of its items, stay unchanged when its source changes later, and
share the chunks a later snapshot did not touch."""

from __future__ import annotations

import asyncio
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.histories import generate
from core.context.compaction import CompactionConfig, Compactor, MicroParams, micro
from core.context.compaction.scan import ContextState
from core.context.shared_tuples import CHUNK, ChunkedList, ChunkedTuple, ListPrefix, shared
from core.context.view import View


def _history(steps: int) -> View:
    """The bench's generated run (tool calls and results, long outputs)."""
    return generate(random.Random(5).randint, steps=steps, pending_end=False, realistic=True).view()


# one op: append k values, or set index i (modulo the length) to a new value
ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 3 * CHUNK)),
        st.tuples(st.just("set"), st.integers(0, 10**6)),
    ),
    min_size=1,
    max_size=12,
)
slices = st.tuples(
    st.one_of(st.none(), st.integers(-1200, 1200)),
    st.one_of(st.none(), st.integers(-1200, 1200)),
    st.one_of(st.none(), st.sampled_from([1, 1, 2, 3, -1, -2])),
)


def _reads_as(seq: object, expected: tuple[int, ...], cuts: list[tuple]) -> None:
    assert isinstance(seq, (ChunkedTuple, ListPrefix))
    assert len(seq) == len(expected)
    assert tuple(seq) == expected and list(reversed(seq)) == list(reversed(expected))
    assert seq == expected and expected == seq and not (seq != expected)  # noqa: SIM202
    assert hash(seq) == hash(expected)
    assert seq + (1,) == expected + (1,) and (1,) + seq == (1,) + expected  # noqa: RUF005
    for i in (0, 1, len(expected) - 1, -1, -len(expected), CHUNK - 1, CHUNK, CHUNK + 1):
        if -len(expected) <= i < len(expected):
            assert seq[i] == expected[i]
    for bad in (len(expected), -len(expected) - 1):
        try:
            seq[bad]
        except IndexError:
            pass
        else:
            raise AssertionError(f"index {bad} of {len(expected)} items did not raise")
    for a, b, c in cuts:
        part = seq[a:b:c]
        assert isinstance(part, tuple) and part == expected[a:b:c]
    if expected:
        v = expected[len(expected) // 2]
        assert v in seq and seq.index(v) == expected.index(v)
        assert seq.count(v) == expected.count(v)
    assert -1 not in seq
    assert seq != (*expected, 0) and seq != list(expected)


@settings(max_examples=60, deadline=None)
@given(ops, st.lists(slices, max_size=6))
def test_chunked_snapshots_read_as_the_tuple_at_their_time(steps: list, cuts: list) -> None:
    live: ChunkedList[int] = ChunkedList()
    model: list[int] = []
    taken: list[tuple[ChunkedTuple[int], tuple[int, ...]]] = []
    counter = 10**7
    for op, arg in steps:
        if op == "append":
            new = list(range(counter, counter + arg))
            counter += arg
            live.extend(new)
            model += new
        elif model:
            counter += 1
            live[arg % len(model)] = counter
            model[arg % len(model)] = counter
        taken.append((live.snapshot(), tuple(model)))
    for snap, expected in taken:  # later writes never show in an earlier snapshot
        _reads_as(snap, expected, cuts)
    a, b = taken[-1][0], live.snapshot()
    assert a is b  # nothing written since: the same snapshot


def test_a_snapshot_shares_every_chunk_before_the_first_write() -> None:
    live: ChunkedList[int] = ChunkedList()
    live.extend(range(10 * CHUNK + 7))
    first = live.snapshot()
    live[8 * CHUNK + 3] = -1
    live.extend(range(5))
    second = live.snapshot()
    assert all(a is b for a, b in zip(first._chunks[:8], second._chunks[:8], strict=True))
    assert first._chunks[8] is not second._chunks[8]
    assert second[8 * CHUNK + 3] == -1 and first[8 * CHUNK + 3] == 8 * CHUNK + 3
    assert second == (*range(8 * CHUNK + 3), -1, *range(8 * CHUNK + 4, 10 * CHUNK + 7), *range(5))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=8), st.lists(slices, max_size=6))
def test_list_prefix_reads_as_the_list_when_it_was_taken(grows: list[int], cuts: list) -> None:
    source: list[int] = []
    taken = []
    for k in grows:
        source += range(len(source), len(source) + k)
        taken.append((ListPrefix(source), tuple(source)))
    for prefix, expected in taken:
        _reads_as(prefix, expected, cuts)


def test_shared_keeps_immutable_sequences_and_copies_the_rest() -> None:
    live: ChunkedList[int] = ChunkedList()
    live.extend([1, 2])
    snap, t = live.snapshot(), (1, 2)
    assert shared(snap) is snap and shared(t) is t
    assert shared([1, 2]) == (1, 2) and type(shared([1, 2])) is tuple


def test_micro_through_the_compactor_hands_over_its_output_without_a_copy() -> None:
    """The user's path: ``Compactor.compact(view, "micro")`` as a run grows. The outcome's
    items are micro's own output object, equal to micro from scratch, and consecutive
    outputs share every chunk before the newly replaced results."""
    view = _history(400)
    token = object()
    params = MicroParams(keep_recent=4, step=2)
    cfg = CompactionConfig(micro=params)
    compactor = Compactor(cfg)
    outs = []
    for end in range(len(view.items) - 40, len(view.items) + 1, 4):
        grown = View(view.items[:end], view.messages, grows=token)
        out = asyncio.run(compactor.compact(grown, "micro", dry_run=True))
        assert out.compacted
        assert out.items is out.layers[-1].items  # no flat copy on the way
        scratch = micro(View(tuple(grown.items), grown.messages), params)
        assert out.items == scratch.items and tuple(out.items) == tuple(scratch.items)
        assert out.tokens_after == compactor.tokens(View(tuple(out.items), view.messages))
        outs.append(out.items)
    first, last = outs[0], outs[-1]
    assert isinstance(first, ChunkedTuple) and isinstance(last, ChunkedTuple)
    shared_chunks = sum(a is b for a, b in zip(first._chunks, last._chunks, strict=False))
    assert shared_chunks >= (len(view.items) - 80) // CHUNK


def test_micro_keeps_one_output_per_state_when_nothing_changed() -> None:
    view = _history(300)
    state = ContextState()
    a = micro(view, MicroParams(keep_recent=4, step=2), state=state)
    b = micro(view, MicroParams(keep_recent=4, step=2), state=state)
    assert a.items is b.items and a.replaced == b.replaced
