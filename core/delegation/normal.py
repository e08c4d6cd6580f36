"""Canonical JSON for the protocol: one text per value, so equal content has equal
SHA-256 and "matches exactly" means equal text."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from core.errors import InvalidInputError

T = TypeVar("T", bound=Hashable)


class DelegationError(InvalidInputError):
    """A brief, anchor, grant or call that breaks the delegation protocol (names the field)."""


def check_json(value: Any, where: str) -> None:
    """Refuse what JSON cannot carry exactly: NaN/Infinity, non-string keys, other types."""
    if isinstance(value, float) and not math.isfinite(value):
        raise DelegationError(f"{where}: {value!r} is not allowed (NaN/Infinity)")
    if value is None or isinstance(value, (str, bool, int, float)):
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise DelegationError(f"{where}: key {k!r} is not a string")
            check_json(v, f"{where}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for n, v in enumerate(value):
            check_json(v, f"{where}[{n}]")
        return
    raise DelegationError(f"{where}: {type(value).__name__} is not JSON-serializable")


def dedupe(items: Iterable[T]) -> tuple[T, ...]:
    """Items in first-seen order, each once."""
    return tuple(dict.fromkeys(items))


def text_field(raw: Mapping[str, Any], name: str, where: str, required: bool = True) -> str:
    """A string field, stripped; a missing required one is an error naming it."""
    value = raw.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise DelegationError(f"{where}.{name}: expected a string")
    text = value.strip()
    if required and not text:
        raise DelegationError(f"{where}.{name}: required and empty")
    return text


def text_list(
    raw: Mapping[str, Any], name: str, where: str, required: bool = False
) -> tuple[str, ...]:
    """A list of strings, stripped, empties dropped, de-duplicated stably. A single string
    is a list of one."""
    value = raw.get(name)
    if value is None:
        value = []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence):
        raise DelegationError(f"{where}.{name}: expected a list of strings")
    out: list[str] = []
    for n, item in enumerate(value):
        if not isinstance(item, str):
            raise DelegationError(f"{where}.{name}[{n}]: expected a string")
        if item.strip():
            out.append(item.strip())
    if required and not out:
        raise DelegationError(f"{where}.{name}: at least one entry is required")
    return dedupe(out)


def check_size(text: str, limit: int, what: str) -> None:
    if len(text) > limit:
        raise DelegationError(f"{what}: {len(text):,} characters normalized, limit {limit:,}")
