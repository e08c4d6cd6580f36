"""Recursive delegation (DEL-1..4): lineage, task protocol versions, context ref snapshots
and delegation grants.

Four new tables, nothing existing changes. ``delegation_traces`` holds each tree member's
lineage (the root's row alone carries the RootTaskAnchor and its SHA-256);
``task_protocol_versions`` every version of a brief (append-only: a revision adds a row);
``context_ref_snapshots`` immutable snapshot content by owner, ref id and version, with the
owner's message it was made at (off the main path after a rewind, it leaves the catalogue);
``delegation_grants`` who holds which pair, granted by whom at which sequence, and why it
ended (a revision or a rewind marks it, nothing is deleted).
"""

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import (
    create_trace_table,
    created_at_column,
    trace_fk,
    trace_id_column,
)

revision = "0009_delegation"
down_revision = "0005_import_speed"


def upgrade() -> None:
    op.create_table(
        "delegation_traces",
        trace_id_column(),
        sa.Column("root_trace_id", sa.String(length=64), nullable=False),
        sa.Column("parent_trace_id", sa.String(length=64), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("call_sequence", sa.Integer(), nullable=True),
        sa.Column("anchor", sa.JSON(), nullable=True),
        sa.Column("anchor_sha256", sa.String(length=64), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=True),
        sa.Column("budget_root", sa.String(length=64), nullable=False),
        created_at_column(),
        trace_fk(),
        sa.PrimaryKeyConstraint("trace_id"),
    )
    op.create_index("ix_delegation_parent", "delegation_traces", ["parent_trace_id"])
    create_trace_table(
        "task_protocol_versions",
        sa.Column("version_index", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("brief", sa.JSON(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("approved_version", sa.String(length=64), nullable=True),
        sa.Column("parent_sequence", sa.Integer(), nullable=True),
        created_at_column(),
        unique=("version_index", "uq_protocol_version"),
    )
    create_trace_table(
        "context_ref_snapshots",
        sa.Column("ref_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("made_at_sequence", sa.Integer(), nullable=True),
        created_at_column(),
    )
    op.create_index(
        "ix_ref_snapshots_pair", "context_ref_snapshots", ["trace_id", "ref_id", "version"]
    )
    create_trace_table(
        "delegation_grants",
        sa.Column("ref_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("granted_by", sa.String(length=64), nullable=False),
        sa.Column("granted_at_sequence", sa.Integer(), nullable=False),
        sa.Column("dropped_reason", sa.Text(), nullable=True),
        created_at_column(),
    )
    op.create_index("ix_delegation_grants_trace", "delegation_grants", ["trace_id"])
    op.create_index("ix_delegation_grants_granter", "delegation_grants", ["granted_by"])


def downgrade() -> None:
    op.drop_index("ix_delegation_grants_granter", table_name="delegation_grants")
    op.drop_index("ix_delegation_grants_trace", table_name="delegation_grants")
    op.drop_table("delegation_grants")
    op.drop_index("ix_ref_snapshots_pair", table_name="context_ref_snapshots")
    op.drop_table("context_ref_snapshots")
    op.drop_table("task_protocol_versions")
    op.drop_index("ix_delegation_parent", table_name="delegation_traces")
    op.drop_table("delegation_traces")
