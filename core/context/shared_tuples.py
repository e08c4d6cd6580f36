"""Immutable sequences that behave as tuples but share structure with the previous one.

A layer's output at 10k items used to be a flat tuple copied from the layer's list on every
call, so a warm call cost the history's length even when only its end changed (issue 20).
These types hand the same data over without that copy:

- ``ChunkedTuple``: items in fixed-size chunks; a new one made by ``ChunkedList.snapshot``
  reuses every chunk not written since the previous snapshot (micro-compaction's output:
  an append, a few placeholders near the end).
- ``ListPrefix``: the first ``n`` items of a list that is only ever appended to (the
  summary's rendered messages and stored sequences, micro's replaced sequences).

Both are read as tuples by every consumer: indexing, slicing (a ``tuple``), ``len``,
iteration, ``in``, equality and hashing equal to the tuple of the same items, ``+`` with
a tuple. Iteration runs at C speed (``itertools.chain`` / ``islice``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

SHIFT = 8
CHUNK = 1 << SHIFT
"""Items per chunk: a snapshot copies its chunk pointers (n / 256) and the chunks written
since the previous one (at least the last, partial chunk)."""
MASK = CHUNK - 1


class TupleLike(Sequence[T_co]):
    """What the two types share: length, indexing (a slice is a ``tuple``), equality,
    hashing and ``+`` as a tuple of the items. A subclass reads item ``i`` (``_at``, in
    range) and a slice (``_slice``) from its own storage."""

    __slots__ = ("_len",)

    def __init__(self, length: int) -> None:
        self._len = length

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> T_co: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T_co, ...]: ...
    def __getitem__(self, index: int | slice) -> T_co | tuple[T_co, ...]:
        if isinstance(index, slice):
            return self._slice(index)
        n = self._len
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._at(index)

    def _at(self, index: int) -> T_co:
        raise NotImplementedError

    def _slice(self, index: slice) -> tuple[T_co, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, (tuple, TupleLike)):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: object) -> tuple[Any, ...]:
        if isinstance(other, (tuple, TupleLike)):
            return (*self, *other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[Any, ...]:
        if isinstance(other, tuple):
            return (*other, *self)
        return NotImplemented

    def __contains__(self, value: object) -> bool:
        return any(v is value or v == value for v in self)  # a tuple's rule

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        return tuple(self).index(value, start, len(self) if stop is None else stop)

    def count(self, value: Any) -> int:
        return tuple(self).count(value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({tuple(self)!r})"


class ChunkedTuple(TupleLike[T_co]):
    """An immutable sequence stored as chunks of ``CHUNK`` items (the last may be shorter).
    Made by ``ChunkedList.snapshot``; two snapshots share every chunk neither changed."""

    __slots__ = ("_chunks",)

    def __init__(self, chunks: tuple[tuple[T_co, ...], ...], length: int) -> None:
        super().__init__(length)
        self._chunks = chunks

    def _at(self, index: int) -> T_co:
        return self._chunks[index >> SHIFT][index & MASK]

    def _slice(self, index: slice) -> tuple[T_co, ...]:
        """Only the chunks the slice covers are read (a tail costs its own length)."""
        start, stop, step = index.indices(self._len)
        if step != 1:
            return tuple(self)[index]
        if start >= stop:
            return ()
        first, last = start >> SHIFT, (stop - 1) >> SHIFT
        if first == last:
            return self._chunks[first][start & MASK : ((stop - 1) & MASK) + 1]
        covered = tuple(chain.from_iterable(self._chunks[first : last + 1]))
        offset = first << SHIFT
        return covered[start - offset : stop - offset]

    def __iter__(self) -> Iterator[T_co]:
        return chain.from_iterable(self._chunks)

    def __reversed__(self) -> Iterator[T_co]:
        return chain.from_iterable(map(reversed, reversed(self._chunks)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkedTuple):  # same chunking: compare chunk by chunk
            return self._len == other._len and all(
                a is b or a == b for a, b in zip(self._chunks, other._chunks, strict=True)
            )
        return super().__eq__(other)

    __hash__ = TupleLike.__hash__


class ChunkedList(Generic[T]):
    """A growable list whose snapshots share structure: ``snapshot()`` is a ``ChunkedTuple``
    of the current items that reuses every full chunk not written since the previous
    snapshot, and is that same object when nothing was written at all."""

    __slots__ = ("_chunks", "_dirty", "_items", "_last")

    def __init__(self) -> None:
        self._items: list[T] = []
        self._chunks: list[tuple[T, ...]] = []
        """Full chunks of the last snapshot (valid before ``_dirty``)."""
        self._dirty = 0
        """The first index written since the last snapshot."""
        self._last: ChunkedTuple[T] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> T:
        return self._items[index]

    def __setitem__(self, index: int, value: T) -> None:
        if index < 0:
            index += len(self._items)
        self._items[index] = value
        self._dirty = min(self._dirty, index)
        self._last = None

    def extend(self, values: Iterable[T]) -> None:
        n = len(self._items)
        self._items += values
        if len(self._items) != n:
            self._last = None

    def snapshot(self) -> ChunkedTuple[T]:
        if self._last is not None:
            return self._last
        items, chunks = self._items, self._chunks
        n = len(items)
        full = n >> SHIFT
        del chunks[min(self._dirty >> SHIFT, full) :]
        for lo in range(len(chunks) << SHIFT, full << SHIFT, CHUNK):
            chunks.append(tuple(items[lo : lo + CHUNK]))
        tail = n & MASK
        parts = (*chunks, tuple(items[n - tail :])) if tail else tuple(chunks)
        self._dirty = full << SHIFT  # the partial chunk is copied again next time
        self._last = ChunkedTuple(parts, n)
        return self._last


class ListPrefix(TupleLike[T_co]):
    """The first ``len(items)`` items of ``items`` at the time it is made: immutable as
    long as ``items`` is only appended to, which its owner guarantees."""

    __slots__ = ("_items",)

    def __init__(self, items: list[T_co]) -> None:
        super().__init__(len(items))
        self._items = items

    def _at(self, index: int) -> T_co:
        return self._items[index]

    def _slice(self, index: slice) -> tuple[T_co, ...]:
        start, stop, step = index.indices(self._len)
        if step < 0:
            return tuple(self)[index]
        return tuple(self._items[start:stop:step])

    def __iter__(self) -> Iterator[T_co]:
        return islice(self._items, self._len)

    def __reversed__(self) -> Iterator[T_co]:
        items = self._items
        return (items[i] for i in range(self._len - 1, -1, -1))

    __hash__ = TupleLike.__hash__


def shared(items: Iterable[T]) -> Sequence[T]:
    """``items`` as an immutable sequence: a tuple or one of these as it is, else a tuple."""
    return items if isinstance(items, (tuple, TupleLike)) else tuple(items)
