"""``trace_totals``: per-trace sums of the recorded usage of model calls (issue 21).

A cache of ``llm_calls`` filled by ``core/cost/totals.py:catch_up`` on first use (not by
this migration, so an upgrade stays instant); cost and token bounds of a search and the
Traces pane's costs read it instead of every call's usage.

Revision ID: 0014_trace_totals
Revises: 0012_search
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_trace_totals"
down_revision = "0012_search"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "trace_totals",
        sa.Column("trace_id", sa.String(64), sa.ForeignKey("traces.id"), primary_key=True),
        sa.Column("agent_name", sa.String(128), primary_key=True),
        sa.Column("model", sa.String(128), primary_key=True),
        sa.Column("shape", sa.String(8), primary_key=True),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("upto_call", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.BigInteger(), nullable=False),
        sa.Column("uncached", sa.BigInteger(), nullable=False),
        sa.Column("cached", sa.BigInteger(), nullable=False),
        sa.Column("cache_creation", sa.BigInteger(), nullable=False),
        sa.Column("completion", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("trace_totals")
