"""Checkpoint blobs inside the store's own database (issue 18: the embedded store is one file).

The default object store of every store: a blob is a row of ``checkpoint_blobs`` written in
the same transaction as its checkpoint row, so copying a SQLite file copies its checkpoints,
and a PostgreSQL team store needs no bucket. A folder or S3 URL, when configured, replaces it
(``core/store/store.py:Store.open``). Stores made before this kept blobs in ``FILE.objects``
beside the file: those are read through and moved in on open (``absorb_folder``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Delete, Engine, Insert, delete, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from core.errors import ConflictError, NotFoundError
from core.store import schema as t
from core.store.objects import LocalObjectStore, ObjectStore, validate_key

#: ``objects=IN_DATABASE`` (or ``CTXLENS_OBJECTS=db:``) keeps blobs in the database even
#: where a folder or bucket is configured by the environment.
IN_DATABASE = "db:"

_blobs = t.checkpoint_blobs


@dataclass(frozen=True)
class DatabaseBlobs:
    """An ``ObjectStore`` over the ``checkpoint_blobs`` table, write-once like the others.

    A writer's transaction uses ``bound(conn)``, so a blob commits or rolls back with its
    checkpoint row; reads outside a transaction open a connection of their own. ``legacy``
    is the folder an older store kept its blobs in, read when a key is not in the table.
    """

    engine: Engine
    legacy: ObjectStore | None = None
    conn: Connection | None = None

    def bound(self, conn: Connection) -> DatabaseBlobs:
        """The same blobs, read and written through ``conn`` (a writer's transaction)."""
        return DatabaseBlobs(self.engine, self.legacy, conn)

    def put(self, key: str, data: bytes) -> None:
        existing = self._data(validate_key(key))
        if existing is None:
            self._write(insert(_blobs).values(key=key, data=data))
        elif existing != data:
            raise ConflictError(f"object {key!r} already exists with other content")

    def get(self, key: str) -> bytes:
        data = self._data(validate_key(key))
        if data is not None:
            return data
        if self.legacy is not None and self.legacy.exists(key):
            return self.legacy.get(key)
        raise NotFoundError(f"object {key!r} not found in {self.describe()}")

    def exists(self, key: str) -> bool:
        found = self._data(validate_key(key)) is not None
        return found or (self.legacy is not None and self.legacy.exists(key))

    def delete_unreferenced(self, key: str) -> None:
        self._write(delete(_blobs).where(_blobs.c.key == key))

    def describe(self) -> str:
        return f"{self.engine.url.render_as_string(hide_password=True)} (checkpoint_blobs)"

    def _data(self, key: str) -> bytes | None:
        query = select(_blobs.c.data).where(_blobs.c.key == key)
        if self.conn is not None:
            return self.conn.execute(query).scalar()
        with self.engine.connect() as conn:
            return conn.execute(query).scalar()

    def _write(self, statement: Insert | Delete) -> None:
        if self.conn is not None:
            self.conn.execute(statement)
            return
        with self.engine.connect() as conn, conn.execution_options(write=True).begin():
            conn.execute(statement)


def bound(objects: ObjectStore, conn: Connection) -> ObjectStore:
    """``objects`` as a writer on ``conn`` uses it (only in-database blobs need the link)."""
    return objects.bound(conn) if isinstance(objects, DatabaseBlobs) else objects


def absorb_folder(engine: Engine, folder: LocalObjectStore) -> int:
    """Move the blobs an older store kept in ``folder`` into its table; returns how many.

    Only blobs a checkpoint row references and the table lacks; the folder itself is left
    as it was. A store that cannot be written (read-only file) keeps reading through.
    """
    missing = (
        select(t.checkpoints.c.object_key)
        .where(~select(_blobs.c.key).where(_blobs.c.key == t.checkpoints.c.object_key).exists())
        .distinct()
    )
    try:
        with engine.connect() as conn:
            keys = [k for k in conn.execute(missing).scalars() if folder.exists(k)]
        if not keys:
            return 0
        with engine.connect() as conn, conn.execution_options(write=True).begin():
            blobs = DatabaseBlobs(engine, conn=conn)
            for key in keys:
                blobs.put(key, folder.get(key))
    except DBAPIError:
        return 0
    return len(keys)
