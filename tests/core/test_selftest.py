"""The core self-test checks: they pass on a real installation and fail on a broken one."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest

from core.selftest import (
    NetworkUsed,
    check_encodings,
    check_migrations,
    check_resources,
    check_store,
    no_network,
    run_check,
)
from core.store import Store
from core.tokens.encodings import DATA, ENCODINGS
from tests.sample_trace import write_sample


def test_checks_pass_on_the_source_tree(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store.open(db) as s:
        write_sample(s)
    for name, fn in [
        ("encodings", check_encodings),
        ("migrations", check_migrations),
        ("store", lambda: check_store(db)),
        ("resources", check_resources),
    ]:
        result = run_check(name, fn)
        assert result.ok, result.line()
        assert result.line().startswith(f"ok: {name}: ")


def test_a_corrupted_encoding_file_fails_naming_it(tmp_path: Path) -> None:
    for spec in ENCODINGS.values():
        shutil.copy(DATA / f"{spec.name}.tiktoken", tmp_path)
    target = tmp_path / "o200k_base.tiktoken"
    target.write_bytes(target.read_bytes()[:-100])  # a truncated download
    result = run_check("encodings", lambda: check_encodings(tmp_path))
    assert not result.ok
    assert result.line().startswith("FAIL: encodings: ")
    assert "o200k_base.tiktoken" in result.detail and "sha256" in result.detail


def test_a_missing_encoding_file_fails(tmp_path: Path) -> None:
    result = run_check("encodings", lambda: check_encodings(tmp_path))
    assert not result.ok and "FileNotFoundError" in result.detail


def test_an_empty_store_fails(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    Store.open(db).close()
    result = run_check("demo store", lambda: check_store(db))
    assert not result.ok and "no traces" in result.detail


def test_no_network_refuses_connections_and_restores_them() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted = threading.Thread(target=lambda: server.accept()[0].close(), daemon=True)
    accepted.start()
    try:
        with no_network():
            with pytest.raises(NetworkUsed):
                socket.create_connection(("127.0.0.1", port), timeout=2)
            with pytest.raises(NetworkUsed):
                socket.getaddrinfo("localhost", port)
            raw = socket.socket()
            with pytest.raises(NetworkUsed):
                raw.connect(("127.0.0.1", port))
            raw.close()
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # the real functions are back
    finally:
        accepted.join(timeout=5)
        server.close()
