"""What a lossless ctxlens JSON trace file is: its format name, version and the per-trace
tables it carries as rows. Shared by the exporter (``core/exporters/ctxlens_json.py``) and
the importer (``core/importers/ctxlens_json.py``), so neither imports the other."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

FORMAT = "ctxlens-trace"
VERSION = 1

#: Per-trace tables exported as rows, in this order; ``id`` columns are dropped.
RECORD_TABLES = (
    "llm_calls",
    "compactions",
    "goal_events",
    "tasks",
    "skill_injections",
    "refs",
    "grants",
    "audit_log",
    "run_events",
    "delegation_traces",
    "task_protocol_versions",
    "context_ref_snapshots",
    "delegation_grants",
    "proxy_requests",
)

#: Tables whose ``id`` is a natural key others refer to (``grants.ref_id``), not a row id.
NATURAL_IDS = frozenset({"refs"})


def binary_columns(table: str) -> frozenset[str]:
    """The columns of ``table`` that hold bytes (exported as base64 text)."""
    from sqlalchemy import LargeBinary

    from core.store.schema import metadata

    cols = metadata.tables[table].c
    return frozenset(c.name for c in cols if isinstance(c.type, LargeBinary))


#: Times a reader can show (``datetime.fromtimestamp``): years 1 to 9999, in seconds.
EARLIEST, LATEST = -62135596800.0, 253402300799.0
#: Json columns that hold an object (a provider's usage), never a bare value.
OBJECT_COLUMNS = frozenset({"usage"})


def check_row(table: str, row: Mapping[str, Any], where: str) -> None:
    """Refuse an exported row whose values the store's column of that name cannot hold as
    written, naming the field: a wrong JSON type (text for a number, an object for text), a
    missing required value, a time outside years 1–9999, a usage that is not an object.
    (A hand-edited export stored as it was broke ``ctxlens traces`` and ``search`` later.)
    Fields the table does not have are left to the caller."""
    from sqlalchemy import JSON, Float, Integer, LargeBinary, String, Text

    from core.errors import InvalidInputError
    from core.store.schema import metadata

    columns = metadata.tables[table].c
    for name, value in row.items():
        col = columns.get(name)
        if col is None:
            continue
        kind = col.type
        if value is None:
            if col.nullable or col.default is not None or col.primary_key:
                continue
            raise InvalidInputError(f"{where}: field {name!r} is required, found null")
        if isinstance(kind, Integer):
            ok = (
                isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
            )
        elif isinstance(kind, Float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            ok = ok and math.isfinite(value)
            if ok and name.endswith("_at") and not EARLIEST <= value <= LATEST:
                raise InvalidInputError(
                    f"{where}: field {name!r} is {value!r}: not a time (seconds since 1970)"
                )
        elif isinstance(kind, (String, Text)):
            ok = isinstance(value, str)
        elif isinstance(kind, LargeBinary):
            ok = isinstance(value, (str, bytes))
        elif isinstance(kind, JSON):
            ok = name not in OBJECT_COLUMNS or isinstance(value, dict)
        else:
            ok = True
        if not ok:
            raise InvalidInputError(
                f"{where}: field {name!r} is {_shown(value)}: expected {_expected(kind, name)}"
            )


def _expected(kind: Any, name: str) -> str:
    from sqlalchemy import JSON, Float, Integer, LargeBinary

    if isinstance(kind, Integer):
        return "a whole number"
    if isinstance(kind, Float):
        return "a number"
    if isinstance(kind, LargeBinary):
        return "base64 text"
    if isinstance(kind, JSON) and name in OBJECT_COLUMNS:
        return "an object or null"
    return "text"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
