"""A record's JSON object from its dataclass fields: a ``to_json`` that is only its fields
is one call, not a line per field.

Values are taken as they are: no deep copy and no conversion (``dataclasses.asdict`` also
copies nested lists and dicts and turns nested dataclasses into dicts); a field that needs
converting (a tuple shown as a list, a nested record's ``to_json``) is written next to the
call, e.g. ``{**fields_json(self, "a", "b"), "items": list(self.items)}``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any


def fields_json(record: Any, *names: str) -> dict[str, Any]:
    """``{name: record.name}`` for ``names``, in that order; with no names, every dataclass
    field of ``record`` in declaration order."""
    keys = names or tuple(f.name for f in fields(record))
    return {n: getattr(record, n) for n in keys}


class FieldsJson:
    """Mixin of a dataclass whose JSON object is all its fields, in declaration order."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return fields_json(self)
