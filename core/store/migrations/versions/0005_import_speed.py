"""Two changes for import speed: ``import_records.bytes`` and a partial tool-call index.

- ``import_records.bytes``, the total size of an imported unit's files. Re-import detection
  hashes a unit's files before importing them (~1 GB/s, several percent of an import). A
  unit whose size no earlier import had cannot be a re-import, so its hash is computed on a
  thread beside the import and checked before the commit
  (``core/importers/api.py:import_unit``). Rows from before this revision have no size; a
  NULL size matches any size, so those stores keep hashing first.
- ``ix_messages_tool_call_id`` only over rows with a ``tool_call_id`` (tool results): the
  other two thirds of an import's rows no longer get an entry.
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_import_speed"
down_revision = "0004_pending_token_counts"


def upgrade() -> None:
    with op.batch_alter_table("import_records") as batch:
        batch.add_column(sa.Column("bytes", sa.BigInteger(), nullable=True))
    op.drop_index("ix_messages_tool_call_id", table_name="messages")
    op.create_index(
        "ix_messages_tool_call_id",
        "messages",
        ["trace_id", "tool_call_id"],
        sqlite_where=sa.text("tool_call_id IS NOT NULL"),
        postgresql_where=sa.text("tool_call_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_tool_call_id", table_name="messages")
    op.create_index("ix_messages_tool_call_id", "messages", ["trace_id", "tool_call_id"])
    with op.batch_alter_table("import_records") as batch:
        batch.drop_column("bytes")
