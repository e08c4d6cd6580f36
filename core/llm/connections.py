"""The open connections of a loopback HTTP server on asyncio (the fault-injecting model
server, the recording proxy): each one served until it ends, all ended by a stop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

DROPPED = (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError)
"""How a connection ends without an error worth logging: the peer left, or stop() cancelled
it (ending quietly keeps asyncio's stream callback from logging the cancellation)."""


class OpenConnections:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    async def serve(
        self,
        writer: asyncio.StreamWriter,
        exchange: Callable[[], Awaitable[bool]],
        quiet: tuple[type[BaseException], ...] = (),
    ) -> None:
        """Run ``exchange()`` (one request and its answer) while it says to keep the
        connection; a dropped connection, or one of ``quiet``, ends it silently."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while await exchange():
                pass
        except DROPPED + quiet:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def end_all(self) -> None:
        """Cancel every open connection and wait until each has closed."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
