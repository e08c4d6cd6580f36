"""PostgreSQL: JSON columns as ``json`` (text kept verbatim) instead of ``jsonb``.

``jsonb`` normalises what it stores (``-0.0`` becomes ``0``, ``\\u0000`` is refused), so a
trace copied from a SQLite file to PostgreSQL did not export identically. ``json`` keeps
the text as written; ctxlens never queries inside JSON on the server. No-op on SQLite.
"""

from alembic import op

revision = "0002_pg_json_text"
down_revision = "0001_initial"

JSON_COLUMNS = [
    ("traces", "metadata"),
    ("messages", "parts"),
    ("messages", "tool_calls"),
    ("messages", "usage"),
    ("messages", "metadata"),
    ("llm_calls", "context"),
    ("llm_calls", "usage"),
    ("llm_calls", "params"),
    ("compactions", "removed"),
    ("compactions", "context_after"),
    ("compactions", "details"),
    ("goal_events", "payload"),
    ("tasks", "blocked_by"),
    ("sessions", "metadata"),
    ("refs", "metadata"),
    ("grants", "cost"),
    ("run_events", "payload"),
]


def _retype(target: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in JSON_COLUMNS:
        op.execute(
            f'ALTER TABLE {table} ALTER COLUMN "{column}" TYPE {target} USING "{column}"::{target}'
        )


def upgrade() -> None:
    _retype("json")


def downgrade() -> None:
    _retype("jsonb")
