"""Schema comparisons against ``core/store/schema.py`` leave out the full-text DDL, which
is written as SQL (``core/store/fulltext.py``), not as SQLAlchemy tables or indexes."""

from __future__ import annotations

from core.store.fulltext import FTS_TABLES, PG_INDEXES


def declared_elsewhere(name: str | None) -> bool:
    """Whether a table or index name belongs to the full-text DDL."""
    return name in FTS_TABLES or name in PG_INDEXES
