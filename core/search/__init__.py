"""Search across every trace of a store (issue 21): one query syntax, full-text indexes.

``query.py`` parses the search box (``ctxlens search`` takes the same text); the full-text
index (SQLite FTS5 table, PostgreSQL GIN expression index) is declared in
``core/store/fulltext.py``; ``index.py`` brings the SQLite index up to date with appended
messages; ``engine.py`` runs a query and returns trace + message hits, newest first.
"""
