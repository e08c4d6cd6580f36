"""Shared fixtures: real stores (SQLite files, a real PostgreSQL server), the corpus, the CLI.

Tests in ``tests/core/test_store_*.py`` that use ``store`` / ``store_url`` run twice: on a
SQLite file and on a fresh database of a PostgreSQL cluster the session starts
(``tests/servers/postgres.py``). Developers without PostgreSQL may set
``CTXLENS_TEST_NO_POSTGRES=1`` to skip the PostgreSQL runs; under CI (``CI`` set) that
opt-out is refused, so a server that cannot start fails the run.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.store import Store
from tests.servers.postgres import PgCluster
from tests.servers.s3 import S3Server, moto_server

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXLENS_SHARED", ROOT.parent / "shared"))
TRACES = SHARED / "traces"


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


BACKENDS = ("sqlite", "postgresql")
PG_OPT_OUT = "CTXLENS_TEST_NO_POSTGRES"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run the store suite on every backend (other tests keep the SQLite default)."""
    name = Path(str(metafunc.definition.fspath)).name
    if "backend" in metafunc.fixturenames and name.startswith("test_store_"):
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    """One PostgreSQL server per test process, removed at the end of the session."""
    if os.environ.get(PG_OPT_OUT) == "1":
        if os.environ.get("CI"):
            pytest.fail(f"{PG_OPT_OUT} is not allowed under CI: the store suite needs PostgreSQL")
        pytest.skip(f"PostgreSQL runs skipped ({PG_OPT_OUT}=1)")
    with PgCluster.start() as pg:
        yield pg


@pytest.fixture(scope="session")
def pg_template(pg_cluster: PgCluster) -> str:
    """A database migrated once by ``Store.open``; each test gets a copy of it."""
    url = pg_cluster.create_database()
    Store.open(url).close()
    return url.rsplit("/", 1)[1]


@pytest.fixture
def pg_url(pg_cluster: PgCluster, pg_template: str) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for this test (dropped afterwards)."""
    url = pg_cluster.create_database(template=pg_template)
    yield url
    pg_cluster.drop_database(url)


@pytest.fixture
def store_url(
    backend: str,
    store_path: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """Where this test's store lives: a SQLite file, or a PostgreSQL URL (checkpoint blobs
    inside the database on both, as by default)."""
    if backend == "sqlite":
        return str(store_path)
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3-protocol server (moto) with signature checking, one per test process."""
    with moto_server() as server:
        yield server


@pytest.fixture
def s3_url(
    s3_server: S3Server, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> str:
    """``s3://bucket/<unique prefix>`` with the server's endpoint and keys in the environment."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    prefix = "".join(c if c.isalnum() else "-" for c in request.node.name)[-60:].strip("-")
    return f"s3://{s3_server.bucket}/{os.getpid()}-{prefix}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = Store.open(store_url)
    yield s
    s.close()


@pytest.fixture
def cli(tmp_path: Path) -> Callable[..., tuple[int, str]]:
    """Run ``ctxlens`` in-process against a given --db; returns (exit code, stdout)."""
    from app.cli import main

    def run(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        code = main(list(argv), out=out)
        return code, out.getvalue()

    return run


@pytest.fixture(autouse=True)
def _isolated_user_data(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never touch the developer's real data folder from a test."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for name in (
        "CTXLENS_DB",
        "CTXLENS_OBJECTS",
        "CTXLENS_S3_ENDPOINT",
        "CTXLENS_S3_ADDRESSING",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
