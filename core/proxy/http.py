"""The few HTTP/1.1 pieces the proxy needs on its listening side (asyncio streams).

Stdlib only: an agent's request is read whole (its body is recorded byte for byte before it
is forwarded), and the response is written as the upstream bytes arrive, so nothing here
needs more than ``readuntil``/``readexactly`` and chunked framing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus

MAX_HEAD = 64 * 1024


class ClientReader(asyncio.StreamReader):
    """The agent's side of a connection, which says when the agent has gone (its end
    closed, or the connection reset) the moment it happens, without reading anything it
    sent: an agent that gives up on a slow model closes its connection and sends nothing
    more, and the proxy must stop waiting on the upstream for it (``on_gone``)."""

    gone = False
    on_gone: Callable[[], None] | None = None
    """Called once when the agent goes (set by whoever is waiting on its behalf)."""

    def feed_eof(self) -> None:
        super().feed_eof()
        self._went()

    def set_exception(self, exc: Exception) -> None:
        super().set_exception(exc)
        self._went()

    def _went(self) -> None:
        if not self.gone:
            self.gone = True
            if self.on_gone is not None:
                self.on_gone()


async def listen(
    handle: Callable[[ClientReader, asyncio.StreamWriter], object], host: str, port: int
) -> asyncio.Server:
    """``asyncio.start_server`` with a ``ClientReader`` for each connection."""
    loop = asyncio.get_running_loop()

    def protocol() -> asyncio.StreamReaderProtocol:
        return asyncio.StreamReaderProtocol(ClientReader(limit=MAX_HEAD, loop=loop), handle)  # type: ignore[arg-type]

    return await loop.create_server(protocol, host, port)


class BadRequest(ValueError):
    """A request the proxy cannot parse; answered with 400."""


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return header_of(self.headers, name) or None

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def keep_alive(self) -> bool:
        return (self.header("connection") or "").lower() != "close"


def header_of(headers: list[tuple[str, str]], name: str) -> str:
    """The first value of header ``name`` (any case), else ``""``."""
    name = name.lower()
    return next((v for k, v in headers if k.lower() == name), "")


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None = None
) -> Request | None:
    """The next request on a connection, or ``None`` when the client closed it. A client
    that asks ``Expect: 100-continue`` (curl, for large bodies) is told to go on."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest("connection closed inside the request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest("request head too large") from None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _version = lines[0].split(" ", 2)
    except ValueError:
        raise BadRequest(f"bad request line {lines[0][:80]!r}") from None
    headers = [_header(line) for line in lines[1:] if line]
    req = Request(method, target, headers, b"")
    if writer is not None and (req.header("expect") or "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    body = await _read_body(reader, req)
    return Request(method, target, headers, body)


def _header(line: str) -> tuple[str, str]:
    name, sep, value = line.partition(":")
    if not sep:
        raise BadRequest(f"bad header line {line[:80]!r}")
    return name.strip(), value.strip()


async def _read_body(reader: asyncio.StreamReader, req: Request) -> bytes:
    if "chunked" in (req.header("transfer-encoding") or "").lower():
        return await _read_chunked(reader)
    try:
        length = int(req.header("content-length") or 0)
    except ValueError:
        raise BadRequest("bad content-length") from None
    return await reader.readexactly(length) if length > 0 else b""


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        except ValueError:
            raise BadRequest("bad chunk size") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def status_line(status: int, reason: str = "") -> bytes:
    if not reason:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Error"
    return f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1")


def head_bytes(status: int, reason: str, headers: list[tuple[str, str]]) -> bytes:
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers)
    return status_line(status, reason) + lines.encode("latin-1") + b"\r\n"


def chunk(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked body (framing only; the bytes stay as they are)."""
    return b"%X\r\n%s\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"
