"""``import_records.bytes``: the total size of an imported unit's files.

Re-import detection hashes a unit's files before importing them (~1 GB/s, several percent
of an import). A unit whose size no earlier import had cannot be a re-import, so its hash
is computed on a thread beside the import and checked before the commit
(``core/importers/api.py:import_unit``). Rows from before this revision have no size and
keep every unit on the hash-first path until... always: a NULL size matches any size.

Revision ID: 0005_import_bytes
Revises: 0004_pending_token_counts
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_import_bytes"
down_revision = "0004_pending_token_counts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("import_records") as batch:
        batch.add_column(sa.Column("bytes", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("import_records") as batch:
        batch.drop_column("bytes")
