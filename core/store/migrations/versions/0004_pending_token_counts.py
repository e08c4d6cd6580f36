"""Imported messages may be written before they are counted: ``token_count = -1``.

An import writes its trace without token counts (exact tiktoken counts cost several times
what parsing does) and fills them in right after its commit. The append-only triggers now
let exactly that through: an UPDATE of ``token_count`` alone, from ``-1`` to a count. Any
other UPDATE and every DELETE is still refused. Only triggers change; no data moves.
"""

from alembic import op

from core.store import triggers
from core.store.migrations.columns import dialect, execute_all

revision = "0004_pending_token_counts"
down_revision = "0003_refs_per_trace"


def upgrade() -> None:
    if dialect() == "sqlite":
        execute_all(["DROP TRIGGER IF EXISTS messages_append_only_update", *triggers.SQLITE[:2]])
    else:
        op.execute(triggers.POSTGRESQL[0])


def downgrade() -> None:
    if dialect() == "sqlite":
        execute_all(
            [
                "DROP TRIGGER IF EXISTS messages_append_only_count_once",
                "DROP TRIGGER IF EXISTS messages_append_only_update",
                triggers.SQLITE_STRICT_UPDATE,
            ]
        )
    else:
        op.execute(triggers.POSTGRESQL_STRICT_FUNCTION)
