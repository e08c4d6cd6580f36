"""Append-only triggers on ``messages`` (SPEC STORE-2), per dialect.

Shared by the migrations and the fresh-database fast path so both create the same.

What a message says never changes. One derived figure may be filled in once: an imported
message is written with ``token_count = PENDING_TOKENS`` and counted after its trace is
committed (``core/importers/counting.py:fill_pending``), so the one UPDATE allowed sets a
pending count to a real one and touches no other column.
"""

from __future__ import annotations

from core.store.schema import messages

#: ``messages.token_count`` of a message not counted yet (readers count it on the fly).
PENDING_TOKENS = -1

#: Every ``messages`` column but ``token_count``: an UPDATE naming any of them is refused.
#: Derived from the table, so a new column is frozen too (a migration recreates the SQLite
#: trigger with it).
FROZEN_COLUMNS = tuple(c.name for c in messages.columns if c.name != "token_count")

_RAISE_SQLITE = "SELECT RAISE(ABORT, 'messages are append-only')"

SQLITE = [
    f"CREATE TRIGGER messages_append_only_update BEFORE UPDATE OF {', '.join(FROZEN_COLUMNS)} "
    f"ON messages BEGIN {_RAISE_SQLITE}; END",
    "CREATE TRIGGER messages_append_only_count_once BEFORE UPDATE OF token_count ON messages "
    f"WHEN OLD.token_count <> {PENDING_TOKENS} OR NEW.token_count < 0 "
    f"BEGIN {_RAISE_SQLITE}; END",
    "CREATE TRIGGER messages_append_only_delete BEFORE DELETE ON messages "
    f"BEGIN {_RAISE_SQLITE}; END",
]

POSTGRESQL = [
    # ``probe`` is the new row with the old count: equal as JSON text (json columns are kept
    # verbatim) means only ``token_count`` changed.
    "CREATE OR REPLACE FUNCTION ctxlens_append_only() RETURNS trigger AS $$ "
    "DECLARE probe messages; "
    "BEGIN "
    f"IF TG_OP = 'UPDATE' AND OLD.token_count = {PENDING_TOKENS} AND NEW.token_count >= 0 THEN "
    "probe := NEW; probe.token_count := OLD.token_count; "
    "IF row_to_json(probe)::text = row_to_json(OLD)::text THEN RETURN NEW; END IF; "
    "END IF; "
    "RAISE EXCEPTION 'messages are append-only'; END; $$ LANGUAGE plpgsql",
    "CREATE TRIGGER messages_append_only BEFORE UPDATE OR DELETE ON messages "
    "FOR EACH ROW EXECUTE FUNCTION ctxlens_append_only()",
]

#: The triggers of revisions 0001-0003 (no UPDATE at all): what migration 0001 creates and
#: what a downgrade from 0004 restores.
SQLITE_STRICT_UPDATE = (
    "CREATE TRIGGER messages_append_only_update BEFORE UPDATE ON messages "
    + f"BEGIN {_RAISE_SQLITE}; END"
)
POSTGRESQL_STRICT_FUNCTION = (
    "CREATE OR REPLACE FUNCTION ctxlens_append_only() RETURNS trigger AS $$ "
    "BEGIN RAISE EXCEPTION 'messages are append-only'; END; $$ LANGUAGE plpgsql"
)


def statements(dialect: str) -> list[str]:
    """The triggers of the current schema."""
    return {"sqlite": SQLITE, "postgresql": POSTGRESQL}.get(dialect, [])


def strict_statements(dialect: str) -> list[str]:
    """The triggers of revisions 0001-0003."""
    return {
        "sqlite": [SQLITE_STRICT_UPDATE, SQLITE[2]],
        "postgresql": [POSTGRESQL_STRICT_FUNCTION, POSTGRESQL[1]],
    }.get(dialect, [])
