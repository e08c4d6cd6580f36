"""What a lossless ctxlens JSON trace file is: its format name, version and the per-trace
tables it carries as rows. Shared by the exporter (``core/exporters/ctxlens_json.py``) and
the importer (``core/importers/ctxlens_json.py``), so neither imports the other."""

from __future__ import annotations

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
