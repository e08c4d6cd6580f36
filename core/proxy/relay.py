"""The upstream response on its way to the agent: the head, then each batch of pieces
framed and written the moment it is handed over, held for the recorder, counted.

Nothing else happens between an upstream read and the write to the client: no parsing,
no store, no log line, one ``transport.write`` per batch (several chunks that arrived in
one read go out in one send). The recorder reads the held pieces later, on its own thread
(``core/proxy/tap.py:HeldTap``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.proxy.http import LAST_CHUNK, chunk, head_bytes
from core.proxy.recording import Outcome
from core.proxy.tap import HeldTap
from core.store.headers import HOP_BY_HOP


class ClientGone(Exception):
    """The agent hung up mid-response."""


class Relay:
    #: Client-side bytes queued before the upstream is paused until they drain.
    PAUSE = 256 * 1024

    def __init__(self, writer: asyncio.StreamWriter, tap: HeldTap | None, o: Outcome) -> None:
        self.writer, self.tap, self.outcome = writer, tap, o
        self.transport = writer.transport
        self.framed = False
        self.gone = False
        self.pause: Callable[[], None] | None = None
        self.resume: Callable[[], None] | None = None
        self.on_gone: Callable[[Exception], None] | None = None

    def start(
        self, status: int, reason: str, headers: list[tuple[str, str]], bodiless: bool
    ) -> None:
        """Write the head; a body without a length is chunked to the client (framing is
        hop-by-hop: the bytes inside stay the upstream's)."""
        lengths = [v for k, v in headers if k.lower() == "content-length"]
        out = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP]
        self.framed = not lengths and not bodiless
        if self.framed:
            out.append(("transfer-encoding", "chunked"))
        elif lengths:
            out.append(("content-length", lengths[0]))
        self.transport.write(head_bytes(status, reason, out))

    def pieces(self, pieces: list[bytes]) -> None:
        """Pieces of the body as the upstream sent them: to the client at once."""
        if self.transport.is_closing():
            self.client_gone()
            return
        if self.framed:
            data = chunk(pieces[0]) if len(pieces) == 1 else b"".join(map(chunk, pieces))
        else:
            data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        self.transport.write(data)
        o = self.outcome
        o.chunks += len(pieces)
        o.response_bytes += sum(map(len, pieces))
        if self.tap is not None:
            for p in pieces:
                self.tap.feed(p)
        if self.pause is not None and self.transport.get_write_buffer_size() > self.PAUSE:
            self.pause()
            asyncio.get_running_loop().create_task(self._drained())

    async def end(self) -> None:
        if self.framed:
            self.transport.write(LAST_CHUNK)
        await self.writer.drain()

    async def _drained(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, RuntimeError):
            self.client_gone()
            return
        if self.resume is not None:
            self.resume()

    def client_gone(self) -> None:
        """The agent went: the upstream body ends with ``ClientGone`` (``on_gone``)."""
        if not self.gone:
            self.gone = True
            if self.on_gone is not None:
                self.on_gone(ClientGone())
