"""A fake upstream and ``ctxlens proxy`` (the CLI process) in front of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ctxlens_process import run
from tests.helpers.proxy_process import ProxyProcess
from tests.servers.fake_upstream import FakeUpstream

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream() as up:
        yield up


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "proxy.db"


@pytest.fixture
def proxy(db: Path, upstream: FakeUpstream) -> Iterator[ProxyProcess]:
    p = ProxyProcess(db, upstream.url)
    yield p
    p.stop()


def ctxlens(db: Path, *args: str) -> tuple[int, str, str]:
    done = run("--db", str(db), *args, timeout=60)
    return done.returncode, done.stdout, done.stderr


def context(db: Path, trace: str, call: int) -> dict[str, Any]:
    code, out, err = ctxlens(db, "context", trace, "--call", str(call), "--json")
    assert code == 0, err
    return json.loads(out)
