"""Full-text search across traces (issue 21).

SQLite: the contentless FTS5 table ``search_fts`` (rowid = ``messages.id``), filled by
``core/search/index.py:catch_up`` before a search (existing messages are indexed by the
first search, not by this migration, so an upgrade stays instant). PostgreSQL: a GIN index
over the searchable text of each message. Both from ``core/store/fulltext.py``.
"""

from core.store import fulltext as ddl
from core.store.migrations.columns import dialect, execute_all

revision = "0012_search"
down_revision = "0011_proxy"


def upgrade() -> None:
    execute_all(ddl.statements(dialect()))


def downgrade() -> None:
    execute_all(ddl.drop_statements(dialect()))
