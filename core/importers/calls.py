"""Request hashes of reconstructed call contexts, without re-reading the whole context.

An imported tool that logs each reply and its usage but not the request (Claude Code,
Codex) gets one LLM call per reply whose context is what the View held before it. Between
two calls of one agent the context usually only grows, so each call renders and hashes just
the messages it adds (hash state carried over); any other change starts that agent over.
The digest equals ``request_sha256(view.openai())`` of the same items.
"""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass, field
from typing import Any

from core.canonical import canonical_json
from core.context.view import NOT_SENT, render_item
from core.records import ContextItem, Message
from core.store.reader import Reader

_EMPTY = hashlib.sha256(b"[]").hexdigest()


@dataclass
class _Lane:
    items: tuple[ContextItem, ...] = ()
    hasher: Any = field(default_factory=hashlib.sha256)


class ContextHashes:
    """``digest(lane, items)``: the request hash of ``items``, incrementally per lane."""

    AHEAD = 128
    KEEP = 1024
    """Messages held for rendering (bounded: a long trace's messages are not all kept)."""

    def __init__(self, reader: Reader, trace_id: str, sent: bytearray | None = None) -> None:
        self.reader = reader
        self.trace_id = trace_id
        self.sent = sent
        """Which sequences are ever sent (``PathTracker.sent``): only those are read ahead."""
        self._lanes: dict[str, _Lane] = {}
        self._msgs: dict[int, Message] = {}

    def digest(self, lane: str, items: tuple[ContextItem, ...]) -> str:
        state = self._lanes.get(lane)
        if state is None or items[: len(state.items)] != state.items:
            state = self._lanes[lane] = _Lane()
        added = items[len(state.items) :]
        for n, text in enumerate(self._render(added)):
            sep = b"[" if not state.items and n == 0 else b","
            state.hasher.update(sep + text.encode("utf-8"))
        state.items = items
        if not items:
            return _EMPTY
        done = state.hasher.copy()
        done.update(b"]")
        return str(done.hexdigest())

    def _render(self, items: tuple[ContextItem, ...]) -> list[str]:
        if len(self._msgs) > self.KEEP:
            self._msgs.clear()
        missing = sorted({i.sequence for i in items if i.sequence is not None} - set(self._msgs))
        if missing:
            self._fetch(missing)
        return [canonical_json(render_item(i, self._msgs)) for i in items]

    def _fetch(self, missing: list[int]) -> None:
        """Read the missing messages and the next ones after them: calls come in time
        order, so what the next calls add is mostly just written (one query serves many)."""
        ahead = range(missing[0], missing[0] + self.AHEAD)
        sent = self.sent
        wanted = set(missing) | {s for s in ahead if sent is None or (s < len(sent) and sent[s])}
        self.reader.count_pending = False  # the hash needs the texts, not their counts
        try:
            self._msgs.update(self.reader.messages(self.trace_id, sorted(wanted)))
        finally:
            self.reader.count_pending = True


class PathTracker:
    """The store tree of the trace being imported, in memory (three small arrays), so the
    View at a reply's head is found without a query per call.

    It applies the View's rule (``core/context/view.py:current_items``): the latest
    compaction whose anchor is on the path to the head, then the path after the anchor,
    without messages that are never sent. ``tests/core/importers/test_imported_calls.py``
    checks it against ``current_items`` on every real trace.
    """

    def __init__(self) -> None:
        self.parent = array("i")
        self.depth = array("i")
        self.sent = bytearray()
        self.boundaries: list[tuple[int | None, tuple[ContextItem, ...]]] = []
        self._path = array("i")
        """The path to the last head asked for (``_path[d]`` = the message at depth d)."""

    def add(self, seq: int, parent: int | None, kind: str) -> None:
        assert seq == len(self.parent), "messages are tracked in sequence order"
        self.parent.append(-1 if parent is None else parent)
        self.depth.append(0 if parent is None else self.depth[parent] + 1)
        self.sent.append(kind not in NOT_SENT)

    def compaction(self, at: int | None, after: tuple[ContextItem, ...]) -> None:
        self.boundaries.append((at, after))

    def items(self, head: int) -> tuple[tuple[ContextItem, ...], int | None]:
        """The context items the View holds at ``head``, and the index (in record order)
        of the compaction they start from."""
        path = self._walk(head)
        start = 0
        out: list[ContextItem] = []
        used = None
        for n in range(len(self.boundaries) - 1, -1, -1):
            at, after = self.boundaries[n]
            if at is None or self._on_path(at, head):
                out.extend(after)
                start = self.depth[at] + 1 if at is not None else 0
                used = n
                break
        sent = self.sent
        out.extend(ContextItem(s) for s in path[start : self.depth[head] + 1] if sent[s])
        return tuple(out), used

    def _on_path(self, seq: int, head: int) -> bool:
        d = self.depth[seq]
        return d <= self.depth[head] and self._path[d] == seq

    def _walk(self, head: int) -> array[int]:
        """Make ``_path`` the path to ``head``, walking up only to where it joins the last."""
        path, depth, parent = self._path, self.depth, self.parent
        climbed: list[int] = []
        node = head
        while node >= 0 and not (depth[node] < len(path) and path[depth[node]] == node):
            climbed.append(node)
            node = parent[node]
        keep = depth[node] + 1 if node >= 0 else 0
        del path[keep:]
        path.extend(reversed(climbed))
        return path
