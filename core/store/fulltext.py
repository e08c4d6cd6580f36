"""The full-text index, per dialect: created by the fresh-store path and migration 0012_search.

SQLite: a contentless FTS5 table ``search_fts`` whose rowid is ``messages.id`` (messages are
append-only, so ids only grow and the index is filled by ``core/search/index.py:catch_up`` after
writes, not by a trigger that would slow every import). PostgreSQL: a GIN index over the
same text expression, kept current by the server itself.
"""

from __future__ import annotations

FTS_TABLE = "search_fts"
FTS_TABLES = frozenset(
    {FTS_TABLE, *(f"{FTS_TABLE}_{s}" for s in ("data", "idx", "docsize", "config"))}
)
"""The FTS5 table and its shadow tables (not SQLAlchemy tables: schema checks skip them)."""

PG_INDEXES = frozenset({"ix_messages_search"})
"""The PostgreSQL expression index (not a SQLAlchemy index: schema checks skip it)."""

PG_BODY = (
    "to_tsvector('simple', content || ' ' || coalesce(name, '') || ' ' || "
    "coalesce(CAST(tool_calls AS TEXT), ''))"
)
"""The indexed expression on PostgreSQL; queries must repeat it exactly to use the index."""

SQLITE = [
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5("
    "body, content='', tokenize='unicode61 remove_diacritics 2')"
]
POSTGRESQL = [f"CREATE INDEX ix_messages_search ON messages USING gin ({PG_BODY})"]


def statements(dialect: str) -> list[str]:
    return {"sqlite": SQLITE, "postgresql": POSTGRESQL}.get(dialect, [])


def drop_statements(dialect: str) -> list[str]:
    return {
        "sqlite": [f"DROP TABLE IF EXISTS {FTS_TABLE}"],
        "postgresql": ["DROP INDEX IF EXISTS ix_messages_search"],
    }.get(dialect, [])
