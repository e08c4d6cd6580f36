"""Opening a store: the engine, per-connection SQLite settings, schema migration on open.

SQLite gets WAL, ``synchronous=NORMAL``, ``busy_timeout`` and ``foreign_keys`` on every
connection, and real transactions through the pysqlite ``BEGIN`` recipe (the driver's own
transaction handling is switched off so ``BEGIN IMMEDIATE`` is ours to issue).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.pool import NullPool

from core.errors import SchemaTooNewError, StoreOpenError

#: The newest migration this code knows; checked on open without importing Alembic.
HEAD_REVISION = "0014_trace_totals"
#: SQLite header ``application_id`` of ctxlens stores ("CTXL"): file managers recognise a
#: store by it (the desktop MIME type ``application/x-ctxlens-store`` matches it as magic).
APPLICATION_ID = 0x4354584C
BUSY_TIMEOUT_MS = 10_000
#: Page size of a new SQLite store (SQLite's default is 4096; an existing store keeps
#: its own). Message contents run to tens of KB: at 4 KB a 20 KB tool result is a chain
#: of overflow pages, and each page a frame of its own in the WAL, so a COMMIT of an
#: imported 3 MB session wrote ~900 frames; at 16 KB the import ran 8-11 % faster
#: (``bench/bench_import.py``, docs/decisions.md "Store page size").
PAGE_SIZE = 16384


def database_url(target: str | os.PathLike[str]) -> str:
    """A SQLAlchemy URL for a path or URL given by the user."""
    s = os.fspath(target)
    if "://" in s:
        return s
    return f"sqlite:///{Path(s).expanduser().resolve()}"


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def sqlite_path(url: str) -> Path | None:
    if not url.startswith("sqlite:///"):
        return None
    raw = url[len("sqlite:///") :].split("?", 1)[0]
    return Path(raw) if raw and raw != ":memory:" else None


def _on_sqlite_connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.close()


def _on_sqlite_begin(conn: Connection) -> None:
    mode = "IMMEDIATE" if conn.get_execution_options().get("write") else "DEFERRED"
    conn.exec_driver_sql(f"BEGIN {mode}")


def make_engine(url: str) -> Engine:
    """An engine with the per-connection settings installed (no schema work)."""
    if is_sqlite(url):
        path = sqlite_path(url)
        if path is not None:
            _check_sqlite_target(path)
        engine = create_engine(url, poolclass=NullPool if path is None else None)
        event.listen(engine, "connect", _on_sqlite_connect)
        event.listen(engine, "begin", _on_sqlite_begin)
        return engine
    return _server_engine(url)


#: Seconds to wait for a server before ``Store.open`` reports it unreachable.
CONNECT_TIMEOUT_S = 10


def _server_engine(url: str) -> Engine:
    """A pooled engine for a server URL; a bad URL or missing driver is a StoreOpenError."""
    shown = url.split("@", 1)[-1] if "@" in url else url  # never echo a password
    try:
        parsed = make_url(url)
        connect_args: dict[str, Any] = {}
        if parsed.get_backend_name() == "postgresql" and "connect_timeout" not in parsed.query:
            connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
        return create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)
    except ModuleNotFoundError as exc:
        hint = " (pip install 'ctxlens[postgres]')" if "psycopg" in str(exc) else ""
        raise StoreOpenError(f"{shown}: cannot open store: {exc}{hint}") from None
    except (ArgumentError, NoSuchModuleError, ValueError) as exc:
        raise StoreOpenError(f"{shown}: cannot open store: {_short(exc)}") from None


def _check_sqlite_target(path: Path) -> None:
    if path.is_dir():
        raise StoreOpenError(f"{path}: is a directory, not a ctxlens store file")
    if path.exists():
        with path.open("rb") as f:
            head = f.read(16)
        if head and head != b"SQLite format 3\x00":
            raise StoreOpenError(f"{path}: not a SQLite database (is this a ctxlens store?)")
    elif not path.parent.is_dir():
        raise StoreOpenError(f"{path}: folder {path.parent} does not exist")


def prepare_schema(engine: Engine) -> None:
    """Create or upgrade the schema; refuse a database newer than this code or not ours."""
    where = _describe(engine)
    try:
        with engine.connect() as conn:
            current = _current_revision(conn)
            if current == HEAD_REVISION:
                conn.rollback()
                _ensure_wal(engine)
                return
            tables = set(inspect(conn).get_table_names())
    except DBAPIError as exc:
        why = why_sqlite_failed(exc, str(engine.url))
        raise StoreOpenError(f"{where}: cannot open store: {why}") from None
    if current is None and tables - {"alembic_version"}:
        raise StoreOpenError(
            f"{where}: database has tables but is not a ctxlens store "
            f"(found {', '.join(sorted(tables)[:5])})"
        )
    if current is None and not tables:
        _create_fresh(engine, where)
    else:
        _upgrade(engine, where, current)
    _ensure_wal(engine)


def _ensure_wal(engine: Engine) -> None:
    """WAL is a property of the file: set once, only after the file is known to be ours.

    Issued on the raw driver connection: the pragma cannot run inside a transaction.
    """
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            _driver(conn).execute("PRAGMA journal_mode=WAL").fetchall()


def _driver(conn: Connection) -> Any:
    """The DBAPI connection under ``conn``: for the pragmas a transaction may not hold."""
    raw = conn.connection.driver_connection
    assert raw is not None
    return raw


def _upgrade(engine: Engine, where: str, current: str | None) -> None:
    from core.store.migrate import known_revisions, upgrade  # Alembic only when needed

    if current is not None and current not in known_revisions():
        raise SchemaTooNewError(
            f"{where}: schema revision {current!r} is newer than this ctxlens "
            f"(knows up to {HEAD_REVISION!r}); upgrade ctxlens to open it"
        )
    try:
        upgrade(engine)
        if engine.dialect.name == "sqlite":
            with engine.connect() as conn, conn.execution_options(write=True).begin():
                conn.exec_driver_sql(f"PRAGMA application_id={APPLICATION_ID}")
    except DBAPIError as exc:
        raise StoreOpenError(f"{where}: cannot migrate store: {_short(exc)}") from None


def _create_fresh(engine: Engine, where: str) -> None:
    """An empty database gets the current schema directly, stamped at ``HEAD_REVISION``.

    This is what Alembic recommends for new databases (create_all, then stamp); a test
    checks that it yields the same schema as running every migration.
    """
    from core.store import fulltext as search_ddl
    from core.store import triggers
    from core.store.schema import metadata

    try:
        with engine.connect() as conn:
            if conn.dialect.name == "sqlite":  # before the first table, outside a transaction
                _driver(conn).execute(f"PRAGMA page_size={PAGE_SIZE}")
            conn = conn.execution_options(write=True)
            with conn.begin():
                if conn.dialect.name == "sqlite":
                    conn.exec_driver_sql(f"PRAGMA application_id={APPLICATION_ID}")
                metadata.create_all(conn)
                for statement in triggers.statements(conn.dialect.name):
                    conn.exec_driver_sql(statement)
                for statement in search_ddl.statements(conn.dialect.name):
                    conn.exec_driver_sql(statement)
                conn.exec_driver_sql(
                    "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, "
                    "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
                )
                conn.execute(
                    text("INSERT INTO alembic_version (version_num) VALUES (:v)"),
                    {"v": HEAD_REVISION},
                )
    except DBAPIError as exc:
        raise StoreOpenError(f"{where}: cannot create store: {_short(exc)}") from None


def _current_revision(conn: Connection) -> str | None:
    try:
        row = conn.execute(text("SELECT version_num FROM alembic_version")).first()
    except OperationalError as exc:
        if "no such table" in str(exc):
            conn.rollback()
            return None
        raise
    except DBAPIError:
        conn.rollback()
        if not inspect(conn).has_table("alembic_version"):
            return None
        raise
    return None if row is None else str(row[0])


def _describe(engine: Engine) -> str:
    path = sqlite_path(str(engine.url))
    return str(path) if path else engine.url.render_as_string(hide_password=True)


def _short(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc).splitlines()[0]


def why_sqlite_failed(exc: BaseException, url: str) -> str:
    """SQLite's words for a failed open or write, with what they mean for a store file:
    a lock another process held past ``BUSY_TIMEOUT_MS``, a read-only file or folder."""
    words = _short(exc)
    path = sqlite_path(url) if is_sqlite(url) else None
    if path is None:
        return words
    if "database is locked" in words or "database table is locked" in words:
        return (
            f"{words}: another process kept a write transaction open on the store for "
            f"{BUSY_TIMEOUT_MS / 1000:g} s; this write was rolled back, try again when it is done"
        )
    if "readonly database" in words:
        if not os.access(path.parent, os.W_OK):
            return (
                f"{words}: the folder {path.parent} is not writable, and SQLite writes "
                f"{path.name}-wal and {path.name}-shm beside the store, even to read it"
            )
        return f"{words}: the store file is not writable"
    return words
