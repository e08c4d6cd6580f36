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
        self.items: tuple[ContextItem, ...] = ()
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

    def extend(self, items: tuple[ContextItem, ...]) -> None:
        """Continue with ``items``, which start with ``self.items``."""
        msgs, get = self.messages, self.messages.get
        cum, total = self.cum, self.cum[-1]
        for i in range(len(self.items), len(items)):
            item = items[i]
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
        self.work += len(items) - len(self.items)
        start = self.units.pop().start if self.units else 0  # the last unit may grow
        split_from(items, msgs, start, self.units)
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

    @property
    def work(self) -> int:
        """Items resolved by every scan so far (an instrumented counter for tests)."""
        return sum(s.work for s in self._scans) + self._evicted

    _evicted = 0

    def scan(self, view: View) -> Scan:
        items = view.items
        for n, s in enumerate(self._scans):
            if s.messages is view.messages and _continues(view, s):
                if s.items is not items:
                    s.extend(items)
                s.grows = view.grows
                if n:
                    self._scans.insert(0, self._scans.pop(n))
                return s
        s = Scan(view.messages)
        s.extend(items)
        s.grows = view.grows
        self._scans.insert(0, s)
        while len(self._scans) > self.slots:
            self._evicted += self._scans.pop().work
        return s


def _continues(view: View, scan: Scan) -> bool:
    """``view`` starts with the scan's items: promised by a shared ``grows`` token, or
    compared."""
    if view.grows is not None and view.grows is scan.grows:
        return len(scan.items) <= len(view.items)
    return _extends(view.items, scan.items)


def _extends(items: Sequence[ContextItem], prefix: tuple[ContextItem, ...]) -> bool:
    """``items`` starts with ``prefix`` (a C-level comparison: identical items are
    compared by identity, so a run's own view costs a pointer check per item)."""
    if items is prefix:
        return True
    k = len(prefix)
    return k <= len(items) and (items[:k] == prefix if k else True)


def scan_of(view: View, state: ContextState | None) -> Scan:
    """The scan of ``view`` in ``state``, or a fresh one (a pass from scratch)."""
    return (state or ContextState(1)).scan(view)
