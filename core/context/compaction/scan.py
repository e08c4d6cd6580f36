"""Incremental indexes of a context, so a layer costs what changed (issue 20).

The store is append-only and, between compactions, a context only grows at its end. A
``Scan`` holds what the layers ask about one context's items (each item's message and
tokens, running token sums, the units) and, per layer, a fold of the items so far
(``Scan.fold``). ``ContextState`` keeps the scans of recent contexts: a context whose
leading items equal the items of one of them (and that reads the same messages mapping)
continues that scan and folds only its new items; any other context starts a new scan. The
results are those of a pass from scratch (a property test compares them); a layer called
without a state makes a fresh one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from core.context.compaction.items import tokens_of
from core.context.compaction.units import Unit, split_from
from core.context.view import View
from core.records import ContextItem, Message

#: Contexts remembered at once: the run's view, and each layer's output of a compaction
#: (the next layer reads it), so a chain of layers over a grown context hits them all.
SLOTS = 8


class Fold(Protocol):
    done: int
    """Items of the scan folded in so far."""

    def extend(self, scan: Scan) -> None: ...


F = TypeVar("F", bound=Fold)


class Scan:
    """One context's items, resolved once: messages, tokens, units, and layer folds."""

    def __init__(self, messages: Mapping[int, Message]) -> None:
        self.messages = messages
        self.items: Sequence[ContextItem] = ()
        self.msgs: list[Message | None] = []
        """The message of each item (``None`` for a synthetic one)."""
        self.seqs: list[int | None] = []
        self.cum: list[int] = [0]
        """``cum[i]``: tokens of ``items[:i]``."""
        self.units: list[Unit] = []
        self._folds: dict[Hashable, Any] = {}
        self.work = 0
        """Items resolved so far: what the scan cost (tests count it)."""
        self.grows: object | None = None
        """The ``View.grows`` token of the views this scan continued."""

    @property
    def tokens(self) -> int:
        return self.cum[-1]

    def tokens_in(self, lo: int, hi: int) -> int:
        return self.cum[hi] - self.cum[lo]

    def extend(self, items: Sequence[ContextItem]) -> None:
        """Continue with ``items``, which start with ``self.items``."""
        self._resolve(len(self.items), items)

    def refresh_from(self, k: int, items: Sequence[ContextItem]) -> None:
        """Continue with ``items``, which equal ``self.items`` before index ``k`` only (a
        layer that changed the items from ``k`` on: micro's newly replaced results). What
        was resolved before ``k`` stays; the layer folds on this scan start over, since
        they assumed items that only grow."""
        if k >= len(self.items):
            self._resolve(len(self.items), items)
            return
        del self.msgs[k:]
        del self.seqs[k:]
        del self.cum[k + 1 :]
        units = self.units
        while units and units[-1].end > k:
            units.pop()
        self._folds.clear()
        self.grows = None  # no longer a prefix of the views that shared the token
        self._resolve(k, items)

    def _resolve(self, k: int, items: Sequence[ContextItem]) -> None:
        """Resolve ``items[k:]`` (everything before ``k`` is resolved) and re-split the
        units from the last one."""
        msgs, get = self.messages, self.messages.get
        cum, total = self.cum, self.cum[-1]
        for item in items[k:]:  # a slice: a ChunkedTuple reads only the chunks it covers
            seq = item.sequence
            msg = get(seq) if seq is not None else None
            self.msgs.append(msg)
            self.seqs.append(seq)
            total += (
                msg.token_count
                if msg is not None and item.content is None
                else (tokens_of(item, msgs))
            )
            cum.append(total)
        self.work += len(items) - k
        start = self.units.pop().start if self.units else 0  # the last unit may grow
        split_from(items, self.msgs, start, self.units)
        self.items = items

    def fold(self, key: Hashable, new: Callable[[], F]) -> F:
        """The layer fold under ``key``, brought up to every item of the scan."""
        fold = self._folds.get(key)
        if fold is None:
            fold = self._folds[key] = new()
        if fold.done < len(self.items):
            fold.extend(self)
            fold.done = len(self.items)
        return fold


class ContextState:
    """Scans of recent contexts (most recent first): the per-layer state a run keeps
    across steps. Owned by a ``Compactor``; the store stays the only record."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        self._scans: list[Scan] = []
        self._offers: list[
            tuple[Sequence[ContextItem], Mapping[int, Message], Callable[[], Scan]]
        ] = []

    @property
    def work(self) -> int:
        """Items resolved by every scan so far (an instrumented counter for tests)."""
        return sum(s.work for s in self._scans) + self._evicted

    _evicted = 0

    def adopt(self, scan: Scan) -> None:
        """Remember ``scan`` first: a layer's scan of its own output, which the layer keeps
        up to date, so the compactor's count of that output (and the next layer) finds it
        by identity instead of resolving the whole output again."""
        scans = self._scans
        if scans and scans[0] is scan:
            return
        if scan in scans:
            scans.remove(scan)
        scans.insert(0, scan)
        while len(scans) > self.slots:
            self._evicted += scans.pop().work

    def offer(
        self,
        items: Sequence[ContextItem],
        messages: Mapping[int, Message],
        build: Callable[[], Scan],
    ) -> None:
        """A layer's output and how to get its scan (micro keeps the scan of its output
        up to date from the first item it changed). Built only when a view of exactly
        those items is scanned, which the compactor does next; a layer called alone (a
        preview, the bench) does not pay for it."""
        offers = [o for o in self._offers if o[0] is not items][: self.slots - 1]
        self._offers = [(items, messages, build), *offers]

    def scan(self, view: View) -> Scan:
        found = self._same(view)
        if found is None:
            offered = self._offered(view)
            if offered is not None:
                return offered
            found = self._compared(view)
        if found is None:
            s = Scan(view.messages)
            s.extend(view.items)
            s.grows = view.grows
            self.adopt(s)
            return s
        n, s = found
        if s.items is not view.items:
            s.extend(view.items)
        s.grows = view.grows
        if n:
            self._scans.insert(0, self._scans.pop(n))
        return s

    def _same(self, view: View) -> tuple[int, Scan] | None:
        """A scan ``view`` continues without comparing items: the same tuple, or a shared
        ``grows`` token."""
        items, grows = view.items, view.grows
        for n, s in enumerate(self._scans):
            if s.messages is view.messages and (
                s.items is items
                or (grows is not None and grows is s.grows and len(s.items) <= len(items))
            ):
                return n, s
        return None

    def _offered(self, view: View) -> Scan | None:
        """The offered scan of exactly ``view``'s items, built and remembered."""
        for k, (items, messages, build) in enumerate(self._offers):
            if items is view.items and messages is view.messages:
                del self._offers[k]
                s = build()
                s.grows = view.grows
                self.adopt(s)
                return s
        return None

    def _compared(self, view: View) -> tuple[int, Scan] | None:
        """A scan whose items lead ``view``'s (compared: the last resort)."""
        for n, s in enumerate(self._scans):
            if s.messages is view.messages and _extends(view.items, s.items):
                return n, s
        return None


def _extends(items: Sequence[ContextItem], prefix: Sequence[ContextItem]) -> bool:
    """``items`` starts with ``prefix`` (a C-level comparison: identical items are
    compared by identity, so a run's own view costs a pointer check per item)."""
    if items is prefix:
        return True
    k = len(prefix)
    return k <= len(items) and (items[:k] == prefix if k else True)


def scan_of(view: View, state: ContextState | None) -> Scan:
    """The scan of ``view`` in ``state``, or a fresh one (a pass from scratch)."""
    return (state or ContextState(1)).scan(view)
