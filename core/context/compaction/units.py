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
from typing import Any, NamedTuple

from core.records import ContextItem, Message

_CALL_ID = attrgetter("id")


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
    return split_from(items, messages, 0, [])


def split_from(
    items: Sequence[ContextItem], messages: Mapping[int, Message], start: int, out: list[Unit]
) -> list[Unit]:
    """Append the units of ``items[start:]`` to ``out`` (``start``: a unit start). Units
    before the last one of a context never change when items are appended (each ended at
    an item that is not one of its results), so a grown context re-splits from there."""
    append = out.append
    get = messages.get
    new = tuple.__new__  # Unit(...) goes through a Python-level __new__: 10k calls add up
    i, n = start, len(items)
    while i < n:
        msg = _caller(items[i], get)
        if msg is None:
            append(new(Unit, (i, i + 1, 0, False)))
            i += 1
            continue
        j, calls, pending = _answered(items, get, i, msg)
        append(new(Unit, (i, j, calls, pending)))
        i = j
    return out


def cut_after(items: Sequence[ContextItem], messages: Mapping[int, Message], index: int) -> int:
    """The nearest safe cut at or after ``index``: a cut inside a unit moves past its end,
    so the call leaves together with all of its results. Found without splitting the
    whole context: a result is inside a unit only if the nearest message before the
    results around it called it, so the search is local."""
    n = len(items)
    if index >= n:
        return n
    get = messages.get
    if index <= 0 or not _is_result(items[index], get):
        return max(index, 0)
    _, unit = _unit_before(items, get, index - 1)
    return unit[0] if unit is not None and index < unit[0] else index


def _unit_before(
    items: Sequence[ContextItem], get: Any, k: int
) -> tuple[int, tuple[int, int, bool] | None]:
    """Walking back from ``k`` over tool results: the index of the message before them and,
    when it makes tool calls, its unit's end, calls and pending flag (``_answered``)."""
    while k > 0 and _is_result(items[k], get):
        k -= 1
    msg = _caller(items[k], get)
    return k, (_answered(items, get, k, msg) if msg is not None else None)


def _caller(item: ContextItem, get: Any) -> Message | None:
    """The item's message if it is an assistant message making tool calls (a unit's lead)."""
    msg = get(item.sequence) if item.sequence is not None else None
    if msg is None or not msg.tool_calls or (item.role or msg.role) != "assistant":
        return None
    return msg  # type: ignore[no-any-return]


def _is_result(item: ContextItem, get: Any) -> bool:
    res = get(item.sequence) if item.sequence is not None else None
    return res is not None and res.role == "tool" and item.role in (None, "tool")


def _answered(
    items: Sequence[ContextItem], get: Any, i: int, msg: Message
) -> tuple[int, int, bool]:
    """End of the unit led by ``items[i]`` (calling ``msg``'s tools), its number of
    calls, and whether some call has no result in it."""
    j, n = i + 1, len(items)
    if len(msg.tool_calls) == 1:  # the common case, without sets
        only = msg.tool_calls[0].id
        while j < n:
            rseq = items[j].sequence
            res = get(rseq) if rseq is not None else None
            if res is None or res.role != "tool" or items[j].role not in (None, "tool"):
                break
            if res.tool_call_id != only:
                break
            j += 1
        return j, 1, j == i + 1
    ids = set(map(_CALL_ID, msg.tool_calls))
    answered: set[str] = set()
    while j < n:
        rseq = items[j].sequence
        res = get(rseq) if rseq is not None else None
        if res is None or res.role != "tool" or items[j].role not in (None, "tool"):
            break
        if res.tool_call_id not in ids:
            break
        answered.add(res.tool_call_id)
        j += 1
    return j, len(ids), answered != ids
