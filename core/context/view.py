"""The View: the message list the model receives, derived from the log, never stored twice.

A context is a list of ``ContextItem`` (a stored message, maybe shown with other content, or
a synthetic item). The current context of a trace is the last compaction boundary on the
main path (its ``context_after``) followed by every main-path message after it; with no
boundary it is the main path itself. Rewinding before a boundary takes the boundary off the
main path, so the original messages come back (SPEC STORE-4).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from core.canonical import canonical_sha256
from core.records import CompactionEvent, ContextItem, LlmCall, Message
from core.store.reader import Reader

#: Kinds that are records of what happened, never sent to a model.
NOT_SENT = frozenset({"meta", "thinking"})

#: UI-4 components, in display order.
COMPONENTS = (
    "system",
    "injected_context",
    "skills",
    "goal_messages",
    "tool_output",
    "summary",
    "granted_refs",
    "conversation",
)


@dataclass(frozen=True)
class View:
    """A context resolved against its messages: ready to render, count and hash."""

    items: Sequence[ContextItem]
    """Immutable, read as a tuple: a tuple, or a layer's output that shares structure with
    its previous one (``core/context/shared_tuples.py:ChunkedTuple``)."""
    messages: Mapping[int, Message]
    boundary: CompactionEvent | None = None
    grows: object | None = None
    """A token for a context that only grows at its end: of two views with the same
    token, the shorter one's items lead the longer one's (``ContextCache`` makes one per
    rebuild), so incremental layer state trusts it instead of comparing the items."""

    def openai(self) -> list[dict[str, Any]]:
        return [render_item(i, self.messages) for i in self.items]

    @cached_property
    def entries(self) -> tuple[Entry, ...]:
        """Each item resolved once against its message (``entry_of``)."""
        return tuple(entry_of(i, self.messages) for i in self.items)

    @property
    def sequences(self) -> list[int]:
        return [i.sequence for i in self.items if i.sequence is not None]


class Entry(NamedTuple):
    """A context item resolved against its message, once: what every consumer asks of it
    (the context cache, reports, replay, metrics, the layers)."""

    item: ContextItem
    message: Message | None
    role: str
    kind: str
    content: str
    tokens: int
    component: str


def entry_of(item: ContextItem, messages: Mapping[int, Message]) -> Entry:
    msg = messages.get(item.sequence) if item.sequence is not None else None
    return Entry(
        item,
        msg,
        role_of(item, msg),
        kind_of(item, msg),
        item.content if item.content is not None else (msg.content if msg is not None else ""),
        tokens_of(item, msg),
        component_of(item, msg),
    )


def role_of(item: ContextItem, msg: Message | None) -> str:
    """The role the model sees: the item's override, else the message's (``user`` for a
    synthetic item without one)."""
    return item.role or (msg.role if msg is not None else "user")


def kind_of(item: ContextItem, msg: Message | None) -> str:
    return item.kind or (msg.kind if msg is not None else "message")


def tokens_of(item: ContextItem, msg: Message | None) -> int:
    """The one token rule: a stored message shown as it is counts its stored tokens; an
    item that overrides the content counts that content (with the message's role, calls and
    name); a synthetic item counts its text. Counts are memoized per text."""
    from core.tokens import count_message

    if msg is not None and item.content is None:
        return msg.token_count
    if msg is not None:
        return count_message(msg.role, item.content or "", msg.tool_calls, msg.name).tokens
    return count_message(item.role or "user", item.content or "").tokens


def render_item(item: ContextItem, messages: Mapping[int, Message]) -> dict[str, Any]:
    """One context item in OpenAI chat shape."""
    if item.sequence is None:
        return {"role": item.role or "user", "content": item.content or ""}
    msg = messages[item.sequence]
    out = msg.to_openai(item.content)
    if item.role is not None:
        out["role"] = item.role
    return out


def render_resolved(item: ContextItem, msg: Message | None) -> dict[str, Any]:
    """``render_item`` for an item whose message was already looked up (``None``: a
    synthetic item): a pass that resolved the context once renders without looking
    every message up again (``render_item`` keeps its own body: it is the hot path of
    every request)."""
    if msg is None:
        if item.sequence is not None:
            raise KeyError(item.sequence)  # what render_item raises for a missing message
        return {"role": item.role or "user", "content": item.content or ""}
    out = msg.to_openai(item.content)
    if item.role is not None:
        out["role"] = item.role
    return out


def request_sha256(openai_messages: Sequence[Mapping[str, Any]]) -> str:
    """The hash recorded with every LLM call: canonical JSON of the message list."""
    return canonical_sha256(openai_messages)


def active_boundary(
    reader: Reader, trace_id: str, head: int | None = None
) -> CompactionEvent | None:
    """The latest compaction whose anchor lies on the path to ``head``."""
    events = reader.compactions(trace_id)
    if not events:
        return None
    segs = reader.segments(trace_id, head)
    for ev in reversed(events):
        if ev.at_sequence is None or reader.is_on_path(trace_id, ev.at_sequence, segs):
            return ev
    return None


def current_items(
    reader: Reader, trace_id: str, head: int | None = None
) -> tuple[tuple[ContextItem, ...], CompactionEvent | None]:
    """Context items the next call would receive, and the boundary they start from."""
    boundary = active_boundary(reader, trace_id, head)
    path = reader.main_path_sequences(trace_id, head)
    items: list[ContextItem] = []
    start = 0
    if boundary is not None:
        items.extend(boundary.context_after)
        if boundary.at_sequence is not None:
            start = path.index(boundary.at_sequence) + 1
    tail = path[start:]
    kinds = _kinds(reader, trace_id, tail)
    items.extend(ContextItem(s) for s in tail if kinds.get(s) not in NOT_SENT)
    return tuple(items), boundary


def _kinds(reader: Reader, trace_id: str, seqs: Sequence[int]) -> dict[int, str]:
    """The kind of each of ``seqs`` that is never sent (the others are left out).

    One range query over the primary key for the never-sent rows between the first and
    last of ``seqs``, rather than ``IN`` lists of every sequence (large statements, and
    one row fetched per message).
    """
    from sqlalchemy import select

    from core.store import schema as t

    if not seqs:
        return {}
    m = t.messages.c
    q = select(m.sequence, m.kind).where(
        m.trace_id == trace_id,
        m.sequence >= min(seqs),
        m.sequence <= max(seqs),
        m.kind.in_(sorted(NOT_SENT)),
    )
    wanted = set(seqs)
    return {int(s): str(k) for s, k in reader.conn.execute(q).all() if s in wanted}


def resolve(reader: Reader, trace_id: str, items: Iterable[ContextItem]) -> View:
    items = tuple(items)
    msgs = reader.messages(trace_id, [i.sequence for i in items if i.sequence is not None])
    return View(items, msgs)


def current_view(reader: Reader, trace_id: str, head: int | None = None) -> View:
    items, boundary = current_items(reader, trace_id, head)
    view = resolve(reader, trace_id, items)
    return View(view.items, view.messages, boundary)


def call_view(reader: Reader, call: LlmCall) -> View:
    return resolve(reader, call.trace_id, call.context)


def component_of(item: ContextItem, msg: Message | None) -> str:
    """Which UI-4 component a context item's tokens belong to."""
    kind = kind_of(item, msg)
    if kind in ("system_prompt", "identity") or (msg is not None and msg.role == "system"):
        return "system"
    if kind in ("injected_context", "task_state", "nudge", "notice", "file_restore"):
        return "injected_context"
    if kind == "injected_skill":
        return "skills"
    if kind in ("summary", "placeholder"):
        return "summary"
    if kind == "grant":
        return "granted_refs"
    if msg is not None:
        if msg.goal_id is not None and _is_goal_message(msg):
            return "goal_messages"
        if msg.role == "tool":
            return "tool_output"
    return "conversation"


def _is_goal_message(msg: Message) -> bool:
    if msg.role == "assistant":
        return any(c.name == "goal" for c in msg.tool_calls)
    return msg.role == "tool" and msg.name == "goal"


def token_breakdown(view: View) -> tuple[int, dict[str, int]]:
    """Total tokens of a view and the split by component (the parts sum to the total),
    from its entries (``tokens_of``)."""
    by = dict.fromkeys(COMPONENTS, 0)
    for entry in view.entries:
        by[entry.component] += entry.tokens
    return sum(by.values()), by
