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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Text, bindparam, select, type_coerce

from core.canonical import canonical_bytes, plain_canonical_bytes
from core.context.view import NOT_SENT, render_item
from core.importers.reading import loads
from core.records import ContextItem, ItemsEncoder, Message, NewMessage, ToolCall
from core.store import schema as t
from core.store.reader import Reader

_EMPTY = hashlib.sha256(b"[]").hexdigest()


@dataclass
class _Lane:
    items: tuple[ContextItem, ...] = ()
    hasher: Any = field(default_factory=hashlib.sha256)
    encoder: ItemsEncoder = field(default_factory=ItemsEncoder)


class ContextHashes:
    """``digest(lane, items)``: the request hash of ``items``, incrementally per lane."""

    AHEAD = 128
    KEEP = 1024
    """Messages held for rendering (bounded: a long trace's messages are not all kept)."""
    KEEP_BYTES = 8_000_000
    """Rendered bytes held at most (long tool outputs: ``KEEP`` of them could be hundreds
    of MB; the fresh messages are bounded in characters too, ``FreshMessages.MAX_CHARS``)."""

    def __init__(
        self,
        reader: Reader,
        trace_id: str,
        sent: bytearray | None = None,
        fresh: Mapping[int, NewMessage] | None = None,
    ) -> None:
        self.reader = reader
        self.trace_id = trace_id
        self.sent = sent
        """Which sequences are ever sent (``PathTracker.sent``): only those are read ahead."""
        self.fresh = fresh
        """Messages this import wrote and still holds (``FreshMessages``): rendered from
        memory, not read back."""
        self._lanes: dict[str, _Lane] = {}
        self._msgs: dict[int, Message] = {}
        self._plain: dict[int, bytes] = {}
        """The rendered bytes of plain items (a message shown as stored) by sequence: a
        lane that starts over (a compaction, a subagent's own branch) renders the same
        messages again; a third of the bench session's renders were such repeats."""
        self._plain_size = 0
        """Bytes held in ``_plain``."""

    def digest(self, lane: str, items: tuple[ContextItem, ...]) -> str:
        state = self._lanes.get(lane)
        if state is None or items[: len(state.items)] != state.items:
            state = self._lanes[lane] = _Lane()
        added = items[len(state.items) :]
        for n, text in enumerate(self._render(added)):
            state.hasher.update(b"[" if not state.items and n == 0 else b",")
            state.hasher.update(text)
        state.encoder.feed(added)
        state.items = items
        if not items:
            return _EMPTY
        done = state.hasher.copy()
        done.update(b"]")
        return str(done.hexdigest())

    def encoded(self, lane: str) -> list[Any]:
        """``encode_items`` of the items last hashed in ``lane`` (kept as they grew)."""
        return self._lanes[lane].encoder.encoded()

    def _render(self, items: tuple[ContextItem, ...]) -> list[bytes]:
        if len(self._msgs) > self.KEEP:
            self._msgs.clear()
        if len(self._plain) > self.KEEP or self._plain_size > self.KEEP_BYTES:
            self._plain.clear()
            self._plain_size = 0
        msgs, fresh, plain_bytes = self._msgs, self.fresh or {}, self._plain
        missing = []
        wanted = {
            i.sequence
            for i in items
            if i.sequence is not None
            and not (i.content is None and i.role is None and i.sequence in plain_bytes)
        }
        for seq in sorted(wanted.difference(msgs)):  # a look-up per wanted, not a set of msgs
            nm = fresh.get(seq)
            if nm is None:
                missing.append(seq)
            else:
                msgs[seq] = _sendable(self.trace_id, seq, nm.role, nm.content, nm.parts,
                                      nm.tool_calls, nm.tool_call_id)  # fmt: skip
        if missing:
            self._fetch(missing)
        out: list[bytes] = []
        for item in items:
            shown_as_stored = item.content is None and item.role is None
            if shown_as_stored and item.sequence in plain_bytes:
                out.append(plain_bytes[item.sequence])
                continue
            value = render_item(item, msgs)
            # Text content: every field is a string (role, content, tool call ids, names and
            # argument texts), so nothing needs ``canonical_bytes``'s walk for floats.
            plain = type(value["content"]) is str
            text = plain_canonical_bytes(value) if plain else canonical_bytes(value)
            if shown_as_stored and item.sequence is not None:
                plain_bytes[item.sequence] = text
                self._plain_size += len(text)
            out.append(text)
        return out

    def _fetch(self, missing: list[int]) -> None:
        """Read the missing messages and the next ones after them: calls come in time
        order, so what the next calls add is mostly just written (one query serves many).
        One range of ``AHEAD`` sequences per query (a constant statement over the primary
        key, not an ``IN`` list of another length each time); rows never sent are skipped."""
        sent, conn, msgs = self.sent, self.reader.conn, self._msgs
        todo, asked = missing, set(missing)
        while todo:
            lo = todo[0]
            hi = lo + self.AHEAD
            if conn.dialect.name == "sqlite":  # through the driver: one query per sample
                rows = conn.exec_driver_sql(_SQLITE_SENDABLE, (self.trace_id, lo, hi))
            else:
                rows = conn.execute(_SENDABLE, {"tid": self.trace_id, "lo": lo, "hi": hi})
            for row in rows:
                seq = row[0]
                if sent is None or (seq < len(sent) and sent[seq]) or seq in asked:
                    _, role, content, parts, calls, call_id = row
                    calls = _json(calls)
                    msgs[seq] = _sendable(
                        self.trace_id,
                        seq,
                        role,
                        content,
                        _json(parts),
                        tuple(ToolCall.from_json(c) for c in calls) if calls else (),
                        call_id,
                    )
            todo = [s for s in todo if s >= hi]


_m = t.messages.c
_SENDABLE = select(
    _m.sequence,
    _m.role,
    _m.content,
    type_coerce(_m.parts, Text),
    type_coerce(_m.tool_calls, Text),
    _m.tool_call_id,
).where(
    _m.trace_id == bindparam("tid"), _m.sequence >= bindparam("lo"), _m.sequence < bindparam("hi")
)
"""What ``Message.to_openai`` reads, JSON columns as their text (the hash does not need
the rest of the row, nor SQLAlchemy's ``json.loads`` of every metadata column)."""
_SQLITE_SENDABLE = (
    "SELECT sequence, role, content, parts, tool_calls, tool_call_id FROM messages"
    " WHERE trace_id = ? AND sequence >= ? AND sequence < ?"
)


def _sendable(
    trace_id: str,
    seq: int,
    role: Any,
    content: str,
    parts: Any,
    calls: tuple[ToolCall, ...],
    call_id: Any,
) -> Message:
    """A ``Message`` with what ``to_openai`` reads; the other fields are placeholders
    (positional, in field order: no parent, goal, branch or name, kind ``message``)."""
    frozen = tuple(parts) if parts is not None else None
    return Message(trace_id, seq, None, role, content, frozen, calls, call_id,
                   None, None, "message", None, None, "", 0, None, 0.0, None)  # fmt: skip


def _json(value: Any) -> Any:
    """A JSON column read as text (SQLite) or already decoded (a server database)."""
    return loads(value.encode("utf-8")) if isinstance(value, str) else value


class FreshMessages(dict[int, NewMessage]):
    """The messages an import wrote most recently, by sequence, up to ``MAX_CHARS`` of
    content (the oldest go first): what its calls' contexts hold is rendered from these,
    not read back from the store. Exact: a row holds the message's fields as given (JSON
    columns read back as the same values)."""

    MAX_CHARS = 8_000_000

    def __init__(self) -> None:
        super().__init__()
        self.chars = 0

    def keep(self, seq: int, nm: NewMessage) -> None:
        self[seq] = nm
        self.chars += len(nm.content)
        while self.chars > self.MAX_CHARS and self:
            self.chars -= len(self.pop(next(iter(self))).content)


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
        self._path_items: list[ContextItem | None] = []
        """The item of each sent message on ``_path`` (``None``: not sent), kept while the
        path is: the contexts of successive calls share them (compared by identity, not
        field by field) and are cut from it in C, not item by item."""

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
        self._walk(head)
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
        out.extend(filter(None, self._path_items[start : self.depth[head] + 1]))
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
        del self._path_items[keep:]
        climbed.reverse()
        path.extend(climbed)
        sent = self.sent
        self._path_items.extend(ContextItem(s) if sent[s] else None for s in climbed)
        return path
