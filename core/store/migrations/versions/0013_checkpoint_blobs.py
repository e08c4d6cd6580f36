"""``checkpoint_blobs``: checkpoint blobs inside the database (issue 18, one-file store).

Copying a store's SQLite file used to leave its checkpoints behind in ``FILE.objects``.
Blobs now live in this table by default; a store that still has that folder reads through
to it, and its blobs are moved in on open (``core/store/blobs.py:absorb_folder``).
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_checkpoint_blobs"
down_revision = "0012_search"


def upgrade() -> None:
    op.create_table(
        "checkpoint_blobs",
        sa.Column("key", sa.String(512), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("checkpoint_blobs")
