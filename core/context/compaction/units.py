"""Safe cut points (SPEC CMP-3): a context is a run of atomic units.

A unit is either one message, or an assistant message with tool calls together with every
tool result that answers it (parallel calls, duplicate results). Transforms drop or keep
whole units and only ever change the *content* of items inside a unit, so no compaction can
separate a call from its results or leave a result without its call: validity holds by
construction, with no repair step afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import NamedTuple, Protocol

from core.records import ContextItem, Message

_CALL_ID = attrgetter("id")


class _Resolved(Protocol):
    """The message of each item by index: a scan's list, or a ``_Lookup``."""

    def __getitem__(self, k: int, /) -> Message | None: ...


class Unit(NamedTuple):
    """Items ``start .. end-1`` (a tuple: a 10k-message context makes 10k of them)."""

    start: int
    end: int
    calls: int = 0
    """Tool calls the unit's assistant message makes (0 for a plain message)."""
    pending: bool = False
    """Some call has no result yet (only valid for the last unit of a context)."""

    @property
    def size(self) -> int:
        return self.end - self.start


def units(items: Sequence[ContextItem], messages: Mapping[int, Message]) -> list[Unit]:
    get = messages.get
    resolved = [get(i.sequence) if i.sequence is not None else None for i in items]
    return split_from(items, resolved, 0, [])


def split_from(
    items: Sequence[ContextItem],
    resolved: Sequence[Message | None],
    start: int,
    out: list[Unit],
) -> list[Unit]:
    """Append the units of ``items[start:]`` to ``out`` (``start``: a unit start;
    ``resolved[i]``: the message of ``items[i]``, as a scan looked it up). Units before
    the last one of a context never change when items are appended (each ended at an
    item that is not one of its results), so a grown context re-splits from there."""
    append = out.append
    new = tuple.__new__  # Unit(...) goes through a Python-level __new__: 10k calls add up
    i, n = start, len(items)
    while i < n:
        msg = resolved[i]
        if msg is None or not msg.tool_calls or (items[i].role or msg.role) != "assistant":
            append(new(Unit, (i, i + 1, 0, False)))
            i += 1
            continue
        j, calls, pending = _answered(items, resolved, i, msg)
        append(new(Unit, (i, j, calls, pending)))
        i = j
    return out


def cut_after(
    items: Sequence[ContextItem],
    messages: Mapping[int, Message],
    index: int,
    resolved: Sequence[Message | None] | None = None,
) -> int:
    """The nearest safe cut at or after ``index``: a cut inside a unit moves past its end,
    so the call leaves together with all of its results. Found without splitting the
    whole context: a result is inside a unit only if the nearest message before the
    results around it called it, so the search is local. ``resolved``: the messages of
    ``items`` as a scan looked them up (else they are looked up as the search reads them)."""
    n = len(items)
    if index >= n:
        return n
    at = resolved if resolved is not None else _Lookup(items, messages)
    if index <= 0 or not _is_result(items[index], at[index]):
        return max(index, 0)
    _, unit = _unit_before(items, at, index - 1)
    return unit[0] if unit is not None and index < unit[0] else index


class _Lookup:
    """``resolved`` for a search without a scan: the message of ``items[k]`` when read."""

    __slots__ = ("get", "items")

    def __init__(self, items: Sequence[ContextItem], messages: Mapping[int, Message]) -> None:
        self.items, self.get = items, messages.get

    def __getitem__(self, k: int) -> Message | None:
        seq = self.items[k].sequence
        return self.get(seq) if seq is not None else None

    def __len__(self) -> int:
        return len(self.items)


def _unit_before(
    items: Sequence[ContextItem], resolved: _Resolved, k: int
) -> tuple[int, tuple[int, int, bool] | None]:
    """Walking back from ``k`` over tool results: the index of the message before them and,
    when it makes tool calls, its unit's end, calls and pending flag (``_answered``)."""
    while k > 0 and _is_result(items[k], resolved[k]):
        k -= 1
    msg = resolved[k]
    if msg is None or not msg.tool_calls or (items[k].role or msg.role) != "assistant":
        return k, None
    return k, _answered(items, resolved, k, msg)


def _is_result(item: ContextItem, res: Message | None) -> bool:
    return res is not None and res.role == "tool" and item.role in (None, "tool")


def _answered(
    items: Sequence[ContextItem], resolved: _Resolved, i: int, msg: Message
) -> tuple[int, int, bool]:
    """End of the unit led by ``items[i]`` (calling ``msg``'s tools), its number of
    calls, and whether some call has no result in it."""
    j, n = i + 1, len(items)
    if len(msg.tool_calls) == 1:  # the common case, without sets
        only = msg.tool_calls[0].id
        while j < n:
            res = resolved[j]
            if res is None or res.role != "tool" or items[j].role not in (None, "tool"):
                break
            if res.tool_call_id != only:
                break
            j += 1
        return j, 1, j == i + 1
    ids = set(map(_CALL_ID, msg.tool_calls))
    answered: set[str] = set()
    while j < n:
        res = resolved[j]
        if res is None or res.role != "tool" or items[j].role not in (None, "tool"):
            break
        call_id = res.tool_call_id
        if call_id is None or call_id not in ids:
            break
        answered.add(call_id)
        j += 1
    return j, len(ids), answered != ids
