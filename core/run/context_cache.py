"""The agent's View kept in memory between steps, extended as messages are appended.

Re-deriving the context from the store each step costs O(history) — half a second at 10k
messages. Between compactions a context only grows at the end, so this cache keeps the item
list, each item's rendered OpenAI message, its tokens and a running sha256 of the request
(the canonical JSON of a list is ``[`` + elements joined by ``,`` + ``]``), and extends them
on append. A stamp (the head and the newest compaction id) catches anything that changed the
View behind the runner's back — a rewind, a compaction applied from the UI, a rolled-back
write — and triggers a full rebuild, so the cache is never stale.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, func, select

from core.canonical import canonical_bytes
from core.context.view import COMPONENTS, NOT_SENT, View, entry_of, render_item
from core.records import CompactionEvent, ContextItem, Message, extend_encoded
from core.run.agent_view import agent_view
from core.store import schema as t
from core.store.reader import Reader

Stamp = tuple[int | None, int | None]
_STAMP = select(  # built once: it runs every step (bench/bench_run.py's per-step overhead)
    t.traces.c.head_sequence,
    select(func.max(t.compactions.c.id))
    .where(t.compactions.c.trace_id == bindparam("tid"))
    .scalar_subquery(),
).where(t.traces.c.id == bindparam("tid"))


def _dump(obj: Any) -> bytes:
    return canonical_bytes(obj)


class ContextCache:
    def __init__(self, trace_id: str, agent_name: str = "main") -> None:
        self.trace_id = trace_id
        self.agent_name = agent_name
        self.stamp: Stamp | None = None
        self.rebuilds = 0
        self._reset()

    def _reset(self) -> None:
        self.items: list[ContextItem] = []
        self.messages: dict[int, Message] = {}
        self.boundary: CompactionEvent | None = None
        self.rendered: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.by_component: dict[str, int] = dict.fromkeys(COMPONENTS, 0)
        self.total = 0
        self.encoded: list[Any] = []
        """The items as ``encode_items`` stores them, kept in step (no 10k-item re-encode)."""
        self._hash = hashlib.sha256(b"[")
        self._grows = object()
        """Views of this cache until the next rebuild only grow (``View.grows``)."""

    # -- reading ----------------------------------------------------------------------------
    def view(self, reader: Reader, tip: int | None) -> View:
        stamp = self._stamp(reader, tip)
        if stamp != self.stamp:
            self._rebuild(reader, tip)
            self.stamp = stamp
        return View(tuple(self.items), self.messages, self.boundary, self._grows)

    def openai(self) -> list[dict[str, Any]]:
        return list(self.rendered)

    def sha256(self) -> str:
        h = self._hash.copy()
        h.update(b"]")
        return h.hexdigest()

    def _stamp(self, reader: Reader, tip: int | None) -> Stamp:
        """(head or tip, newest compaction id), in one round trip."""
        row = reader.conn.execute(_STAMP, {"tid": self.trace_id}).first()
        if row is None:
            return tip, None
        return (row[0] if tip is None else tip), row[1]

    def _rebuild(self, reader: Reader, tip: int | None) -> None:
        self.rebuilds += 1
        view = agent_view(reader, self.trace_id, tip, self.agent_name)
        if self._only_appended(view):  # e.g. written by a path that did not call appended
            for item in view.items[len(self.items) :]:
                if item.sequence is not None:
                    self.messages[item.sequence] = view.messages[item.sequence]
                self._add(item)
            return
        self._reset()
        self.messages = dict(view.messages)
        self.boundary = view.boundary
        for item in view.items:
            self._add(item)

    def _only_appended(self, view: View) -> bool:
        """The store's View extends the cached one (same boundary): the cache, and the
        views it gave (``View.grows``), stay valid; stored messages never change."""
        same = (view.boundary.id if view.boundary else None) == (
            self.boundary.id if self.boundary else None
        )
        k = len(self.items)
        return same and 0 < k <= len(view.items) and view.items[:k] == tuple(self.items)

    # -- growing ----------------------------------------------------------------------------
    def appended(self, messages: Iterable[Message], tip: int | None = None) -> None:
        """Messages just appended at the end of this agent's path (same transaction)."""
        if self.stamp is None:
            return
        last = None
        for m in messages:
            last = m.sequence
            if m.kind in NOT_SENT or m.agent_name != self.agent_name:
                continue
            self.messages[m.sequence] = m
            self._add(ContextItem(m.sequence))
        if last is not None:
            self.stamp = (last if tip is None else tip, self.stamp[1])

    def invalidate(self) -> None:
        self.stamp = None

    def _add(self, item: ContextItem) -> None:
        entry = entry_of(item, self.messages)
        rendered = render_item(item, self.messages)
        if self.items:
            self._hash.update(b",")
        self._hash.update(_dump(rendered))
        self.items.append(item)
        extend_encoded(self.encoded, (item,))
        self.rendered.append(rendered)
        self.tokens.append(entry.tokens)
        self.by_component[entry.component] += entry.tokens
        self.total += entry.tokens
