"""Refs keyed per trace: primary key ``(trace_id, id)``, grants refer to ``(trace_id,
ref_id)``.

A ref id was unique in the whole store, so a replay of a trace (a new trace in the same
store) had to rename every ref — and a renamed id tokenizes differently, so the replay's
contexts could never equal the source's. Ids stay stable names for content (REF-1) within
a trace; two traces may now hold the same id.

Both tables are rebuilt (create, copy, drop, rename indexes back), which works the same on
SQLite and PostgreSQL; on PostgreSQL the grants id sequence is moved past the copied ids.
"""

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import (
    create_trace_table,
    dialect,
    grant_columns,
    ref_columns,
    trace_fk,
    trace_id_column,
)

revision = "0003_refs_per_trace"
down_revision = "0002_pg_json_text"

REF_COLUMNS = (
    "trace_id, id, kind, description, tokens, bytes, image_blocks, source_sequence, content, "
    "created_at, metadata"
)
GRANT_COLUMNS = (
    "id, trace_id, ref_id, granted_by, reason, cost, granted_at_sequence, message_sequence, "
    "revoked_at_sequence, revoked_reason, created_at"
)


def _refs(per_trace: bool) -> None:
    op.create_table(
        "refs",
        trace_id_column(),
        sa.Column("id", sa.String(length=64), nullable=False),
        *ref_columns(sa.JSON()),
        trace_fk(),
        sa.PrimaryKeyConstraint("trace_id", "id") if per_trace else sa.PrimaryKeyConstraint("id"),
    )


def _grants(per_trace: bool) -> None:
    ref_fk = (
        sa.ForeignKeyConstraint(["trace_id", "ref_id"], ["refs.trace_id", "refs.id"])
        if per_trace
        else sa.ForeignKeyConstraint(["ref_id"], ["refs.id"])
    )
    create_trace_table("grants", *grant_columns(sa.JSON()), references=[ref_fk])


def _rebuild(per_trace: bool) -> None:
    op.rename_table("grants", "grants_old")
    op.rename_table("refs", "refs_old")
    _refs(per_trace)
    op.execute(f"INSERT INTO refs ({REF_COLUMNS}) SELECT {REF_COLUMNS} FROM refs_old")
    _grants(per_trace)
    op.execute(f"INSERT INTO grants ({GRANT_COLUMNS}) SELECT {GRANT_COLUMNS} FROM grants_old")
    op.drop_table("grants_old")
    op.drop_table("refs_old")
    op.create_index("ix_refs_trace", "refs", ["trace_id"], unique=False)
    op.create_index("ix_grants_trace", "grants", ["trace_id"], unique=False)
    if dialect() == "postgresql":
        op.execute(
            "SELECT setval(pg_get_serial_sequence('grants', 'id'), "
            "COALESCE((SELECT MAX(id) FROM grants), 0) + 1, false)"
        )


def upgrade() -> None:
    _rebuild(per_trace=True)


def downgrade() -> None:
    _rebuild(per_trace=False)
