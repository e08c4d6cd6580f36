"""``watch_batches``: what ``ctxlens watch`` has read of each session file.

One row per batch of appended lines, written in the same transaction as the batch's
messages: the newest row of a path says how far it was imported (a restart continues from
there with no duplicates), and the rows in order say where each batch ended, so the
importer's state can be rebuilt by reading the same batches again
(``core/live/tail_import.py``). ``head_sha256`` and ``inode`` identify the file that was
read; a file replaced, truncated or rotated under the same name no longer matches.
"""

import sqlalchemy as sa
from alembic import op

from core.store.migrations.columns import created_at_column, id_primary_key, trace_id_reference

revision = "0010_watch"
down_revision = "0009_delegation"


def upgrade() -> None:
    op.create_table(
        "watch_batches",
        id_primary_key(),
        sa.Column("path", sa.Text(), nullable=False),
        trace_id_reference(),
        sa.Column("start", sa.BigInteger(), nullable=False),
        sa.Column("end", sa.BigInteger(), nullable=False),
        sa.Column("head_sha256", sa.String(64), nullable=False),
        sa.Column("inode", sa.BigInteger(), nullable=True),
        sa.Column("format", sa.String(32), nullable=False),
        created_at_column(),
    )
    op.create_index("ix_watch_batches_path", "watch_batches", ["path", "id"])
    op.create_index("ix_watch_batches_trace", "watch_batches", ["trace_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_watch_batches_trace", table_name="watch_batches")
    op.drop_index("ix_watch_batches_path", table_name="watch_batches")
    op.drop_table("watch_batches")
