"""``proxy_requests``: every request the recording proxy received (issue 16 part 3).

The row is written before the request is forwarded and completed after the response
ended, so a request in flight when ctxlens was killed is found (state ``in_flight``) and
marked ``incomplete`` on the next start. ``body`` is the request body byte for byte.
"""

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import id_primary_key, trace_id_reference

revision = "0011_proxy"
down_revision = "0010_watch"


def upgrade() -> None:
    op.create_table(
        "proxy_requests",
        id_primary_key(),
        trace_id_reference(),
        sa.Column("call_index", sa.Integer(), nullable=False),
        sa.Column("api", sa.String(16), nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.Column("body_sha256", sa.String(64), nullable=False),
        sa.Column("headers", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("model", sa.String(128), nullable=False),
        sa.Column("stream", sa.Integer(), nullable=False),
        sa.Column("context", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("message_keys", sa.JSON(none_as_null=True), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("response_key", sa.String(40), nullable=True),
        sa.Column("response_id", sa.String(128), nullable=True),
        sa.Column("response_sequence", sa.Integer(), nullable=True),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("response_bytes", sa.BigInteger(), nullable=False),
        sa.Column("first_byte_ms", sa.Float(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.UniqueConstraint("trace_id", "call_index", name="uq_proxy_requests_trace_index"),
    )
    op.create_index("ix_proxy_requests_state", "proxy_requests", ["state"])
    op.create_index("ix_proxy_requests_response_id", "proxy_requests", ["response_id"])


def downgrade() -> None:
    op.drop_index("ix_proxy_requests_response_id", table_name="proxy_requests")
    op.drop_index("ix_proxy_requests_state", table_name="proxy_requests")
    op.drop_table("proxy_requests")
