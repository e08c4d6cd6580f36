"""Fixtures for model-access tests: a real model server on 127.0.0.1, and no leaks."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from core.llm import ChatBackend, EchoBackend, ModelServer


@pytest.fixture
def serve() -> Iterator[Callable[..., ModelServer]]:
    """Start ``ModelServer(backend, **options)``; every server is stopped after the test,
    and the test fails if a server thread or listening socket is left behind."""
    before = {t.ident for t in threading.enumerate()}
    servers: list[ModelServer] = []

    def start(backend: ChatBackend | None = None, **options: Any) -> ModelServer:
        server = ModelServer(backend or EchoBackend(), **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    leaked = [
        t
        for t in threading.enumerate()
        if t.ident not in before
        and t.is_alive()
        and t.name != "ctxlens-checkpoint"  # the store's: its fixture closes it later
    ]
    assert not leaked, f"threads left running: {leaked}"
    for server in servers:
        assert not server.running
        with socket.socket() as probe, pytest.raises(OSError):
            probe.connect(("127.0.0.1", server.port))


@pytest.fixture
def echo_server(serve: Callable[..., ModelServer]) -> ModelServer:
    return serve()
