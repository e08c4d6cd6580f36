"""The store facade: open by path or URL, then read or write in explicit transactions.

store = Store.open("traces.db")
with store.write() as w:           # one BEGIN IMMEDIATE ... COMMIT
    trace = w.create_trace("demo")
    w.append(trace.id, [NewMessage("user", "hi")])
with store.read() as r:            # one consistent snapshot
    page = r.main_path_page(trace.id, 0, 100)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, OperationalError

from core.errors import CtxlensError, IntegrityError, StoreOpenError
from core.records import Checkpoint, Message, NewMessage, Trace
from core.store.blobs import IN_DATABASE, DatabaseBlobs, absorb_folder, bound
from core.store.engine import (
    database_url,
    make_engine,
    prepare_schema,
    sqlite_path,
    why_sqlite_failed,
)
from core.store.objects import LocalObjectStore, ObjectStore
from core.store.reader import Reader
from core.store.wal_checkpoint import Checkpointer
from core.store.writer import HEAD, Writer


class Store:
    """One trace store: a database plus an object store for checkpoint blobs (by default
    the database itself, ``core/store/blobs.py``)."""

    def __init__(self, engine: Engine, objects: ObjectStore, url: str) -> None:
        self.engine = engine
        self.objects = objects
        self.url = url
        self._owns_objects = False
        path = sqlite_path(url)
        self.checkpointer = Checkpointer(path) if path is not None else None
        """Checkpoints a SQLite file's WAL after writes, off the writer's thread."""

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str],
        objects: ObjectStore | str | os.PathLike[str] | None = None,
    ) -> Store:
        """Open (creating or migrating as needed) the store at a path or SQLAlchemy URL.

        Checkpoint blobs live in the database itself (``core/store/blobs.py``) unless
        ``objects`` or ``$CTXLENS_OBJECTS`` names a folder or an ``s3://bucket/prefix`` URL
        (``core/store/s3.py``); ``IN_DATABASE`` overrides the variable. A SQLite file whose
        blobs an older ctxlens kept in ``<file>.objects`` reads them there and moves them in.
        """
        url = database_url(target)
        engine = make_engine(url)
        try:
            prepare_schema(engine)
            store = cls(engine, _objects_for(url, engine, objects), url)
        except BaseException:
            engine.dispose()
            raise
        store._owns_objects = objects is None or isinstance(objects, (str, os.PathLike))
        return store

    @property
    def path(self) -> Path | None:
        """The SQLite file, or ``None`` for a server database."""
        return sqlite_path(self.url)

    def describe(self) -> str:
        return str(self.path) if self.path else self.engine.url.render_as_string(True)

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.close()
        self.engine.dispose()
        close_objects = getattr(self.objects, "close", None)
        if self._owns_objects and close_objects is not None:
            close_objects()  # an S3 client we created; a caller's object store stays open

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def read(self) -> Iterator[Reader]:
        try:
            with self.engine.connect() as conn, conn.begin():
                yield Reader(conn)
        except OperationalError as exc:
            why = why_sqlite_failed(exc, str(self.engine.url))
            raise StoreOpenError(f"{self.describe()}: {why}") from None

    @contextmanager
    def write(self) -> Iterator[Writer]:
        """One write transaction; everything in it commits together or not at all."""
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(write=True)
                with conn.begin():
                    writer = Writer(conn, bound(self.objects, conn))
                    yield writer
                    writer.flush()
            if self.checkpointer is not None:
                self.checkpointer.poke()
        except CtxlensError:
            raise
        except DBAPIError as exc:
            if "append-only" in str(exc):
                raise IntegrityError("messages are append-only") from None
            if exc.connection_invalidated:
                raise StoreOpenError(
                    f"{self.describe()}: connection to the database was lost; the "
                    f"transaction was rolled back and nothing of it was written ({_short(exc)})"
                ) from None
            why = why_sqlite_failed(exc, str(self.engine.url))
            raise StoreOpenError(f"{self.describe()}: write failed: {why}") from None

    # -- conveniences (each its own transaction) ----------------------------------------
    def create_trace(self, title: str = "", source: str = "ctxlens", **kw: object) -> Trace:
        with self.write() as w:
            return w.create_trace(title, source, **kw)  # type: ignore[arg-type]

    def append(
        self, trace_id: str, messages: list[NewMessage], parent: int | None = HEAD
    ) -> list[Message]:
        with self.write() as w:
            return w.append(trace_id, messages, parent)

    def trace(self, trace_id: str) -> Trace:
        with self.read() as r:
            return r.find_trace(trace_id)

    def traces(self) -> list[Trace]:
        with self.read() as r:
            return r.traces()

    def rewind(self, trace_id: str, to_sequence: int) -> tuple[int | None, int]:
        with self.write() as w:
            return w.rewind(trace_id, to_sequence)

    def missing_blobs(self, trace_id: str) -> list[Checkpoint]:
        """The checkpoints of ``trace_id`` whose blob the object store does not have."""
        with self.read() as r:
            cps = r.checkpoints(r.find_trace(trace_id).id)
        return [cp for cp in cps if not self.objects.exists(cp.object_key)]

    def read_checkpoint(self, checkpoint: Checkpoint) -> bytes:
        """The blob of a checkpoint, verified against the hash in its metadata row."""
        import hashlib

        data = self.objects.get(checkpoint.object_key)
        digest = hashlib.sha256(data).hexdigest()
        if digest != checkpoint.sha256:
            raise IntegrityError(
                f"checkpoint {checkpoint.trace_id}/{checkpoint.generation}: blob "
                f"{checkpoint.object_key} has sha256 {digest[:12]}…, metadata says "
                f"{checkpoint.sha256[:12]}…"
            )
        return data


def _objects_for(
    url: str, engine: Engine, objects: ObjectStore | str | os.PathLike[str] | None
) -> ObjectStore:
    if objects is not None and not isinstance(objects, (str, os.PathLike)):
        return objects
    where = os.fspath(objects) if objects is not None else os.environ.get("CTXLENS_OBJECTS")
    if where and where.startswith("s3://"):
        from core.store.s3 import S3ObjectStore  # httpx only when S3 is used

        return S3ObjectStore.from_url(where)
    if where and where != IN_DATABASE:
        return LocalObjectStore(where)
    return DatabaseBlobs(engine, _legacy_folder(engine, url))


def _legacy_folder(engine: Engine, url: str) -> LocalObjectStore | None:
    """``<file>.objects``, where blobs of a SQLite store made before issue 18 live, moved
    into the file now (blobs the move could not take are still read there)."""
    path = sqlite_path(url)
    folder = path.with_name(path.name + ".objects") if path is not None else None
    if folder is None or not folder.is_dir():
        return None
    legacy = LocalObjectStore(folder)
    absorb_folder(engine, legacy)
    return legacy


def _short(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc).splitlines()[0]
