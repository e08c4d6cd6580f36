"""A message's fields, declared once: the ``messages`` table (``core/store/schema.py``).

The row a writer inserts, the JSON columns a SQLite writer encodes itself, the columns the
append-only triggers freeze and the fields of the lossless export all derive from the
table's columns, and one codec per field turns a record's value into the stored (or
exported) one and back. A new field of a message is a column there, the same name on
``Message``/``NewMessage`` (``core/records.py``) and a migration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from operator import attrgetter, itemgetter
from typing import Any

from sqlalchemy import JSON

from core.records import Message, NewMessage, ToolCall
from core.store.schema import messages

#: Every column but the row id, in table order: the order of a row tuple.
COLUMNS = tuple(c.name for c in messages.columns if c.name != "id")
#: Where a message sits in its trace, assigned by the store (the row's first columns).
PLACE = ("trace_id", "sequence", "parent_sequence", "line", "depth")
#: What a message says: the rest of the row, also attributes of ``NewMessage``.
FIELDS = COLUMNS[len(PLACE) :]
#: Columns holding JSON (a SQLite writer going around SQLAlchemy encodes them).
JSON_COLUMNS = tuple(c.name for c in messages.columns if isinstance(c.type, JSON))
#: A message in the lossless export: all but its trace and the storage index.
EXPORT_FIELDS = tuple(c for c in COLUMNS if c not in ("trace_id", "line", "depth"))
assert COLUMNS[: len(PLACE)] == PLACE, "the messages table starts with the place columns"


def _as_list(value: Any) -> Any:
    return list(value) if value is not None else None


def _as_tuple(value: Any) -> Any:
    return tuple(value) if value is not None else None


def _calls_out(calls: Iterable[ToolCall]) -> list[dict[str, str]] | None:
    return [c.to_json() for c in calls] if calls else None


def _calls_in(value: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall.from_json(c) for c in value) if value else ()


#: field -> (record value -> stored value, stored value -> record value); the other fields
#: are stored as they are.
CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "parts": (_as_list, _as_tuple),
    "tool_calls": (_calls_out, _calls_in),
}

_AT = {name: i for i, name in enumerate(COLUMNS)}
_ENCODE_AT = tuple((_AT[name], encode) for name, (encode, _) in CODECS.items())
_OF_MESSAGE = attrgetter(*COLUMNS)
_OF_FIELDS = attrgetter(*FIELDS)
_TOKENS, _CREATED = _AT["token_count"], _AT["created_at"]


def _encoded(row: list[Any]) -> list[Any]:
    for i, encode in _ENCODE_AT:
        row[i] = encode(row[i])
    return row


def row_of(m: Message) -> list[Any]:
    """The ``messages`` row of a record, in ``COLUMNS`` order (JSON columns as values)."""
    return _encoded(list(_OF_MESSAGE(m)))


def new_row(
    place: tuple[str, int, int | None, int, int], nm: NewMessage, tokens: int, now: float
) -> list[Any]:
    """The row of a message about to be appended at ``place`` (``PLACE`` values)."""
    return _encoded(_fields_row(place, nm, tokens, now))


def appended(
    place: tuple[str, int, int | None, int, int], nm: NewMessage, tokens: int, now: float
) -> tuple[list[Any], Message]:
    """``new_row`` and the record ``message_of_row`` would read from it, built from the
    message's own values (a run's ``append`` returns the records it wrote: decoding each
    row back cost as much as writing it). Values a codec would change on the way back
    (a list of parts, a tool call whose fields are not all strings) take
    ``message_of_row``, so the record is the same either way."""
    row = _fields_row(place, nm, tokens, now)
    values = _RECORD_OF_ROW(row)
    parts, calls = row[_PARTS], row[_CALLS]
    record = None
    if (parts is None or type(parts) is tuple) and _plain_calls(calls):
        record = Message(*values)
    _encoded(row)
    return row, record if record is not None else message_of_row(row)


def _fields_row(
    place: tuple[str, int, int | None, int, int], nm: NewMessage, tokens: int, now: float
) -> list[Any]:
    row = [*place, *_OF_FIELDS(nm)]
    row[_TOKENS] = tokens
    if row[_CREATED] is None:
        row[_CREATED] = now
    return row


def _plain_calls(calls: Any) -> bool:
    """A tuple of ``ToolCall`` of strings: ``_calls_in(_calls_out(calls)) == calls``."""
    if type(calls) is not tuple:
        return False
    return not calls or all(
        type(c) is ToolCall
        and type(c.id) is str
        and type(c.name) is str
        and type(c.arguments) is str
        for c in calls
    )


def message_of_row(row: Sequence[Any]) -> Message:
    """The record of a row in ``COLUMNS`` order (what ``new_row`` gave)."""
    return message_from(dict(zip(COLUMNS, row, strict=True)))


def message_from(stored: Mapping[Any, Any]) -> Message:
    """A record from a mapping of every column (a row's, or an exported message's with its
    trace and a placeholder ``line``/``depth`` added): values gathered in the record's
    field order at C speed, the coded fields decoded."""
    values = list(_GATHER(stored))
    for i, decode in _DECODE_AT:
        values[i] = decode(values[i])
    return Message(*values)  # ``core/records.py:_quick_init``: no per-field lookups


_RECORD_ORDER = tuple(f.name for f in fields(Message))
_GATHER = itemgetter(*_RECORD_ORDER)
_DECODE_AT = tuple((_RECORD_ORDER.index(name), decode) for name, (_, decode) in CODECS.items())
#: A row's values (before its codecs) in the record's field order.
_RECORD_OF_ROW = itemgetter(*(_AT[name] for name in _RECORD_ORDER))
_PARTS, _CALLS = _AT["parts"], _AT["tool_calls"]


def export_json(m: Message) -> dict[str, Any]:
    """A message of the lossless export (no calls: ``[]``, where a row holds NULL)."""
    out = {c: v for c, v in zip(COLUMNS, row_of(m), strict=True) if c in _EXPORTED}
    out["tool_calls"] = out["tool_calls"] or []
    return out


_EXPORTED = frozenset(EXPORT_FIELDS)
