"""Conversions between table rows and the records of ``core.records``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, TypeVar

from sqlalchemy import Row, Table

from core import records as rec
from core.store.message_fields import message_from
from core.store.paths import LineInfo

R = TypeVar("R")


def message_from_row(r: Row[Any]) -> rec.Message:
    return message_from(r._mapping)


def record_from(cls: type[R], m: Mapping[Any, Any], **given: Any) -> R:
    """A record whose fields are its row's columns of the same names (``given``: the
    fields stored under another name or another shape)."""
    return cls(**{n: m[n] for n in _field_names(cls) if n not in given}, **given)


def row_values(record: Any, table: Table, **given: Any) -> dict[str, Any]:
    """The row of ``record`` for ``table``: every column the record has a field of the same
    name for, but a surrogate row id (the database assigns it); ``given`` wins."""
    names = _field_names(type(record))
    return {
        c: given[c] if c in given else getattr(record, c) for c in _columns(table, names, given)
    }


def _field_names(cls: Any) -> frozenset[str]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
    return names


_FIELD_NAMES: dict[Any, frozenset[str]] = {}


def _columns(table: Table, names: frozenset[str], given: Mapping[str, Any]) -> list[str]:
    return [
        c.name
        for c in table.columns
        if (c.name in names or c.name in given) and not (c.primary_key and c.autoincrement is True)
    ]


def trace_from_row(r: Row[Any]) -> rec.Trace:
    m = r._mapping
    return record_from(rec.Trace, m, head=m["head_sequence"], messages=m["message_count"])


def line_from_row(r: Row[Any]) -> LineInfo:
    return record_from(LineInfo, r._mapping)


def context_from_json(data: list[Any]) -> tuple[rec.ContextItem, ...]:
    return rec.decode_items(data)


def call_from_row(r: Row[Any]) -> rec.LlmCall:
    m = r._mapping
    return record_from(rec.LlmCall, m, context=context_from_json(m["context"]))


def compaction_from_row(r: Row[Any]) -> rec.CompactionEvent:
    m = r._mapping
    return record_from(
        rec.CompactionEvent,
        m,
        removed=tuple(m["removed"]),
        context_after=context_from_json(m["context_after"]),
    )


def checkpoint_from_row(r: Row[Any]) -> rec.Checkpoint:
    return record_from(rec.Checkpoint, r._mapping)


def ref_from_row(r: Row[Any]) -> rec.ContextRef:
    return record_from(rec.ContextRef, r._mapping)


def grant_from_row(r: Row[Any]) -> rec.Grant:
    return record_from(rec.Grant, r._mapping)


def skill_injection_from_row(r: Row[Any]) -> rec.SkillInjection:
    return record_from(rec.SkillInjection, r._mapping)


def goal_event_from_row(r: Row[Any]) -> rec.GoalEvent:
    return record_from(rec.GoalEvent, r._mapping)
