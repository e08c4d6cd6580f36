"""The store on a server database (STORE-1, STORE-8): schema through Alembic, triggers,
opening errors, losing the connection mid-transaction, paging a long trace by index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, insert, inspect, text

from core.errors import StoreOpenError
from core.records import NewMessage
from core.store import Store
from core.store import schema as t
from core.store.engine import HEAD_REVISION
from core.store.migrate import upgrade
from core.store.schema import metadata
from tests.helpers.schema import declared_elsewhere
from tests.servers.postgres import PgCluster, free_port


@pytest.fixture
def empty_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """An empty database (no tables at all) on this backend."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    pg: PgCluster = request.getfixturevalue("pg_cluster")
    url = pg.create_database()
    yield url
    pg.drop_database(url)


def test_alembic_builds_exactly_the_declared_schema(empty_url: str) -> None:
    engine = create_engine(empty_url)
    try:
        upgrade(engine)
        with engine.connect() as conn:
            # the full-text table and index are DDL of core/store/fulltext.py, not metadata
            ctx = MigrationContext.configure(
                conn, opts={"include_name": lambda name, _kind, _p: not declared_elsewhere(name)}
            )
            diffs = compare_metadata(ctx, metadata)
            version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            tables = {n for n in inspect(conn).get_table_names() if not declared_elsewhere(n)}
    finally:
        engine.dispose()
    assert diffs == []
    assert version == HEAD_REVISION
    assert tables == set(metadata.tables) | {"alembic_version"}


def test_store_at_0001_upgrades_on_open_keeping_json(empty_url: str, backend: str) -> None:
    engine = create_engine(empty_url)
    try:
        upgrade(engine, "0001_initial")
        with engine.begin() as conn:
            conn.execute(
                insert(t.traces).values(
                    id="old", title="from 0001", source="ctxlens", created_at=1.0,
                    next_sequence=0, next_line=0, message_count=0, metadata=OLD_METADATA,
                )
            )  # fmt: skip
    finally:
        engine.dispose()
    with Store.open(empty_url, objects=None) as store:
        assert store.trace("old").metadata == OLD_METADATA
        with store.read() as r:
            version = r.conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            if backend == "postgresql":
                kind = r.conn.execute(
                    text(
                        "SELECT data_type FROM information_schema.columns "
                        "WHERE table_name = 'traces' AND column_name = 'metadata'"
                    )
                ).scalar()
                assert kind == "json"
    assert version == HEAD_REVISION


OLD_METADATA = {"nested": {"k": [1, 2.5, None]}, "text": "ünï"}


def test_append_only_triggers_exist(store: Store, backend: str) -> None:
    query = {
        "sqlite": "SELECT name FROM sqlite_master WHERE type = 'trigger'",
        "postgresql": "SELECT tgname FROM pg_trigger WHERE tgrelid = 'messages'::regclass "
        "AND NOT tgisinternal",
    }[backend]
    with store.read() as r:
        names = set(r.conn.exec_driver_sql(query).scalars())
    assert names and all("append_only" in n for n in names)


def test_unreachable_server_is_a_clear_open_error() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(StoreOpenError, match=rf"127\.0\.0\.1:{port}.*cannot open store"):
        Store.open(f"postgresql+psycopg://nobody@127.0.0.1:{port}/ctxlens")


@pytest.mark.parametrize(
    "url",
    ["postgresql+nosuchdriver://h/db", "nosuchdb://h/db", "postgresql+psycopg://h:notaport/db"],
)
def test_bad_urls_are_clear_open_errors(url: str) -> None:
    with pytest.raises(StoreOpenError, match="cannot open store"):
        Store.open(url)


def test_missing_database_is_a_clear_open_error(pg_cluster: PgCluster) -> None:
    with pytest.raises(StoreOpenError, match='database "nope" does not exist'):
        Store.open(pg_cluster.url("nope"))


def test_page_is_one_index_range_scan(store: Store, backend: str) -> None:
    """Paging cost does not grow with the trace: a page is an index range, at either end."""
    tr = store.create_trace("long")
    n = 20_000
    with store.write() as w:
        for start in range(0, n, 2000):
            w.append(
                tr.id,
                [NewMessage("user", f"m{i}", token_count=1) for i in range(start, start + 2000)],
            )
    with store.read() as r:
        assert r.main_path_length(tr.id) == n
        first = r.main_path_page(tr.id, 0, 50)
        last = r.main_path_page(tr.id, n - 50, 50)
        assert [m.content for m in first] == [f"m{i}" for i in range(50)]
        assert [m.content for m in last] == [f"m{i}" for i in range(n - 50, n)]
        plan = _plan(r.conn, backend, tr.id, n - 50, n - 1)
    assert "ix_messages_line_depth" in plan, plan


def _plan(conn: object, backend: str, trace_id: str, lo: int, hi: int) -> str:
    sql = (
        f"SELECT * FROM messages WHERE trace_id = '{trace_id}' AND line = 0 "
        f"AND depth BETWEEN {lo} AND {hi} ORDER BY depth"
    )
    if backend == "sqlite":
        rows = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + sql).all()  # type: ignore[attr-defined]
        return " ".join(str(r[-1]) for r in rows)
    conn.exec_driver_sql("ANALYZE messages")  # type: ignore[attr-defined]
    rows = conn.exec_driver_sql("EXPLAIN " + sql).all()  # type: ignore[attr-defined]
    return " ".join(str(r[0]) for r in rows)


# -- connection loss ---------------------------------------------------------------------
@pytest.fixture
def own_cluster() -> Iterator[PgCluster]:
    """A private server this test may stop and restart without disturbing others."""
    with PgCluster.start() as pg:
        yield pg


def test_connection_lost_mid_transaction(own_cluster: PgCluster, tmp_path: Path) -> None:
    store = Store.open(own_cluster.create_database(), objects=tmp_path / "objects")
    try:
        tr = store.create_trace("t")
        store.append(tr.id, [NewMessage("user", "kept")])
        lost = r"connection.*lost.*nothing.*written"
        with pytest.raises(StoreOpenError, match=lost), store.write() as w:
            w.append(tr.id, [NewMessage("assistant", "half")])
            own_cluster.down("immediate")  # the server dies mid-transaction
            w.append(tr.id, [NewMessage("user", "never")])
        own_cluster.up()
        own_cluster.wait_ready()
        with store.read() as r:
            assert [m.content for m in r.iter_main_path(tr.id)] == ["kept"]
            assert r.trace(tr.id).messages == 1
        store.append(tr.id, [NewMessage("assistant", "after restart")])
        with store.read() as r:
            path = list(r.iter_main_path(tr.id))
        assert [m.content for m in path] == ["kept", "after restart"]
        assert [m.sequence for m in path] == [0, 1]
    finally:
        store.close()


def test_connection_lost_at_commit(own_cluster: PgCluster, tmp_path: Path) -> None:
    store = Store.open(own_cluster.create_database(), objects=tmp_path / "objects")
    try:
        tr = store.create_trace("t")
        with pytest.raises(StoreOpenError, match="connection"), store.write() as w:
            w.append(tr.id, [NewMessage("user", f"m{i}") for i in range(100)])
            own_cluster.down("immediate")  # dies before COMMIT (flush + commit follow)
        own_cluster.up()
        own_cluster.wait_ready()
        with store.read() as r:
            assert r.trace(tr.id).messages == 0
            assert r.main_path_length(tr.id) == 0
        assert store.append(tr.id, [NewMessage("user", "ok")])[0].sequence == 0
    finally:
        store.close()
