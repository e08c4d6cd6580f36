"""``trace_totals``: per-trace sums of the recorded usage of model calls (issue 21).

A cache of ``llm_calls`` filled by ``core/cost/totals.py:catch_up`` on first use (not by
this migration, so an upgrade stays instant); cost and token bounds of a search and the
Traces pane's costs read it instead of every call's usage. Revises 0012_search.
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_trace_totals"
down_revision = "0013_checkpoint_blobs"

KEYS = (("agent_name", 128), ("model", 128), ("shape", 8))
SUMS = ("prompt", "uncached", "cached", "cache_creation", "completion")


def upgrade() -> None:
    op.create_table(
        "trace_totals",
        sa.Column("trace_id", sa.String(64), sa.ForeignKey("traces.id"), primary_key=True),
        *(sa.Column(name, sa.String(n), primary_key=True) for name, n in KEYS),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("upto_call", sa.Integer(), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in SUMS),
    )


def downgrade() -> None:
    op.drop_table("trace_totals")
