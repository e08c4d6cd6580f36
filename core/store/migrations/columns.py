"""The pieces the migrations repeat: the standard id, a trace's foreign key, one table's
columns as two revisions create them, statements run per dialect.

FROZEN. A migration is history: it must create what it created when it was written, and
these helpers are part of what the revisions under ``versions/`` say. So a helper here
never changes, not even its column order or a type's options (the DDL of every store ever
migrated would change with it); a new revision that needs something else gets a new
helper or writes it out. ``tests/core/test_store_schema.py`` checks the result against
``core/store/schema.py``; the fold that introduced this module was checked byte for byte
(``sqlite_master`` after each revision and the offline SQL of both dialects, before and
after: docs/decisions.md, "Repeated code in the store").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql


def id_type() -> sa.types.TypeEngine[int]:
    """BIGINT on PostgreSQL, INTEGER on SQLite (only ``INTEGER PRIMARY KEY`` aliases the
    ROWID there)."""
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def id_column() -> sa.Column[int]:
    """The autoincrement ``id`` of revisions 0001-0009 (its key is a separate
    ``PrimaryKeyConstraint``)."""
    return sa.Column("id", id_type(), autoincrement=True, nullable=False)


def id_primary_key() -> sa.Column[int]:
    """The autoincrement ``id`` of revisions 0010 and 0011 (the column is the key)."""
    return sa.Column("id", id_type(), primary_key=True, autoincrement=True)


def trace_id_column() -> sa.Column[str]:
    """``trace_id`` of revisions 0001-0009 (its foreign key is ``trace_fk``)."""
    return sa.Column("trace_id", sa.String(length=64), nullable=False)


def trace_fk() -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(["trace_id"], ["traces.id"])


def trace_id_reference() -> sa.Column[str]:
    """``trace_id`` of revisions 0010 and 0011 (the column carries its foreign key)."""
    return sa.Column("trace_id", sa.String(64), sa.ForeignKey("traces.id"), nullable=False)


def created_at_column() -> sa.Column[float]:
    return sa.Column("created_at", sa.Float(), nullable=False)


def jsonb_0001() -> sa.types.TypeEngine[Any]:
    """Revision 0001's JSON type: ``jsonb`` on PostgreSQL (0002 made those columns
    ``json``)."""
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def create_trace_table(
    name: str,
    *columns: sa.Column[Any],
    references: Iterable[sa.ForeignKeyConstraint] = (),
    unique: tuple[str, str] | None = None,
) -> None:
    """A table of rows owned by a trace, as revisions 0001-0009 create one: ``id``,
    ``trace_id``, ``columns``; foreign keys ``references`` then ``trace_id``'s; key ``id``;
    ``unique`` = (column, constraint name) makes ``(trace_id, column)`` unique. The
    constraints are made in that order, the order their DDL lists them in."""
    constraints: list[Any] = [*references, trace_fk(), sa.PrimaryKeyConstraint("id")]
    if unique is not None:
        constraints.append(sa.UniqueConstraint("trace_id", unique[0], name=unique[1]))
    op.create_table(name, id_column(), trace_id_column(), *columns, *constraints)


def create_index_batch(table: str, name: str, columns: list[str]) -> None:
    """A plain index, created the way revision 0001 did (in a batch)."""
    with op.batch_alter_table(table, schema=None) as batch_op:
        batch_op.create_index(name, columns, unique=False)


def drop_table_batch(table: str, *indexes: str) -> None:
    """Drop ``table`` after its ``indexes`` (in a batch), as revision 0001's downgrade does."""
    if indexes:
        with op.batch_alter_table(table, schema=None) as batch_op:
            for index in indexes:
                batch_op.drop_index(index)
    op.drop_table(table)


def ref_columns(json: sa.types.TypeEngine[Any]) -> list[sa.Column[Any]]:
    """The columns of ``refs`` after its keys, as 0001 created them and 0003 recreated
    them (with ``json`` as the type of ``metadata``)."""
    return [
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("bytes", sa.Integer(), nullable=False),
        sa.Column("image_blocks", sa.Integer(), nullable=False),
        sa.Column("source_sequence", sa.Integer(), nullable=True),
        sa.Column("content", sa.Text(), nullable=True),
        created_at_column(),
        sa.Column("metadata", json, nullable=True),
    ]


def grant_columns(json: sa.types.TypeEngine[Any]) -> list[sa.Column[Any]]:
    """The columns of ``grants`` after ``id`` and ``trace_id``, as 0001 created them and
    0003 recreated them (with ``json`` as the type of ``cost``)."""
    return [
        sa.Column("ref_id", sa.String(length=64), nullable=False),
        sa.Column("granted_by", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("cost", json, nullable=False),
        sa.Column("granted_at_sequence", sa.Integer(), nullable=True),
        sa.Column("message_sequence", sa.Integer(), nullable=True),
        sa.Column("revoked_at_sequence", sa.Integer(), nullable=True),
        sa.Column("revoked_reason", sa.Text(), nullable=True),
        created_at_column(),
    ]


def dialect() -> str:
    return op.get_bind().dialect.name


def execute_all(statements: Iterable[str]) -> None:
    for statement in statements:
        op.execute(statement)
