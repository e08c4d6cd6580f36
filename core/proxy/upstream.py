"""The proxy's upstream side: a lean HTTP/1.1 client on an asyncio ``Protocol``.

Why not httpx for this part: its receive path (httpcore, h11, anyio, a cancel scope per
read) costs ~350 µs of CPU per streamed piece on the 2-core machine the bench runs on,
against ~70 µs for a protocol's ``data_received``, and hands each piece on one event-loop
turn later. Here each body piece goes to its sink inside ``data_received``: the relay
(``core/proxy/relay.py:Relay.pieces``) writes it to the client in the same turn the
upstream's bytes arrived. Connections are kept alive and reused per (scheme, host, port);
TLS uses httpx's SSL context (certifi, ``SSL_CERT_FILE``). An upstream reached through an
environment proxy (``HTTPS_PROXY``…) still goes through httpx
(``core/proxy/server.py:ProxyServer._forward_httpx``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import httpx

from core.proxy.http import header_of

MAX_HEAD = 64 * 1024
Sink = Callable[[list[bytes]], None]


@dataclass(frozen=True, slots=True)
class Head:
    """A response's status line and headers, as the upstream sent them."""

    status: int
    reason: str
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str:
        return header_of(self.headers, name)


class UpstreamTimeout(Exception):
    """No response (or no next piece of it) within the timeout."""


class UpstreamUnreachable(Exception):
    """The connection could not be made."""


class UpstreamCut(Exception):
    """The upstream closed the connection or sent something that is not HTTP."""


class Exchange(Protocol):
    """A response on its way: its head, then its body handed to a sink."""

    head: Head

    async def body(self, sink: Sink) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def stop_body(self, exc: Exception) -> None: ...
    async def close(self) -> None: ...


class Connection(asyncio.Protocol):
    """One upstream connection: a response head parsed, then its body handed on piece by
    piece (chunked framing undone, as httpx's ``aiter_raw`` did; content encoding kept)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self.loop = loop
        self.timeout = timeout
        """Seconds to wait for the head, and between two pieces of the body."""
        self.transport: asyncio.Transport | None = None
        self.head = Head(0, "", [])
        self.release: Callable[[Connection], None] = lambda conn: conn.abort()
        self.closed = False
        self.reusable = False
        self._buf = b""
        self._head: asyncio.Future[Head] | None = None
        self._done: asyncio.Future[None] | None = None
        self._sink: Sink | None = None
        self._framing = ""
        """"" (no body yet) | length | chunked | close"""
        self._left = 0
        self._crlf = False
        self._trailers = False
        self._keep = False
        self._head_only = False
        self._lost: Exception | None = None
        """How the connection went while no one was reading its body yet."""
        self._last = 0.0
        self._watch: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._last = self.loop.time()
        if self._sink is not None:
            self._body(data)
            return
        self._buf += data
        if self._head is not None and not self._head.done():
            self._parse_head()

    def eof_received(self) -> bool:
        self._ended(UpstreamCut("upstream closed the connection"))
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._ended(UpstreamCut(f"upstream closed the connection: {exc!r}"))

    # -- one exchange ----------------------------------------------------------------------
    async def exchange(self, request: bytes, head_only: bool) -> Head:
        """Send a request; its response head (interim ``1xx`` skipped)."""
        assert self.transport is not None
        self.reusable, self._lost, self._framing = False, None, ""
        self._left, self._crlf, self._trailers = 0, False, False
        self._head, self._done = self.loop.create_future(), self.loop.create_future()
        self._head_only, self._last = head_only, self.loop.time()
        self.transport.write(request)
        try:
            self.head = await asyncio.wait_for(self._head, self.timeout)
        except TimeoutError:
            self.abort()
            raise UpstreamTimeout() from None
        except asyncio.CancelledError:  # the agent went, or the proxy stops: the line is
            self.abort()  # dropped, so the upstream stops generating for no one
            raise
        if _cancel_asked():  # the head came in the turn of the cancel (``_cancel_asked``)
            self.abort()
            raise asyncio.CancelledError
        return self.head

    async def body(self, sink: Sink) -> None:
        """Hand the body to ``sink`` as it arrives; returns when it ended."""
        assert self._done is not None
        self._sink = sink
        if self._framing == "":
            self._finish()
        elif self._buf:
            data, self._buf = self._buf, b""
            self._body(data)
        if self._lost is not None:
            self._ended(self._lost)
        if not self._done.done():
            self._arm()
        try:
            await self._done
        finally:
            self._sink = None
            if self._watch is not None:
                self._watch.cancel()

    def stop_body(self, exc: Exception) -> None:
        """The relay gave up (the client went): end the body with ``exc``, drop the line."""
        if self._done is not None and not self._done.done():
            self._done.set_exception(exc)
        self.abort()

    def pause(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    @property
    def stray(self) -> bool:
        """Bytes arrived while the line sat idle: it cannot carry another response."""
        return bool(self._buf)

    async def close(self) -> None:
        """Done with this response: the line goes back to its pool, or is dropped."""
        self.release(self)

    def abort(self) -> None:
        self.reusable = False
        if self.transport is not None:
            self.transport.abort()

    # -- head ------------------------------------------------------------------------------
    def _parse_head(self) -> None:
        assert self._head is not None
        while not self._head.done():
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEAD:
                    self._fail_head(UpstreamCut("upstream response head too large"))
                return
            raw, self._buf = self._buf[:end], self._buf[end + 4 :]
            try:
                head, version = _head(raw)
            except ValueError as exc:
                self._fail_head(UpstreamCut(f"upstream sent a bad response head: {exc}"))
                return
            if 100 <= head.status < 200 and head.status != 101:
                continue  # interim response (100 Continue): the real one follows
            self._framing = _framing(head, self._head_only)
            self._left = int(head.header("content-length")) if self._framing == "length" else 0
            self._keep = version == "HTTP/1.1" and "close" not in head.header("connection")
            self._head.set_result(head)

    def _fail_head(self, exc: Exception) -> None:
        assert self._head is not None
        self._head.set_exception(exc)
        self.abort()

    # -- body ------------------------------------------------------------------------------
    def _body(self, data: bytes) -> None:
        assert self._sink is not None
        if self._framing == "chunked":
            pieces = self._unchunk(data)
        elif self._framing == "length":
            pieces = [data[: self._left]] if len(data) > self._left else [data]
            self._buf = data[self._left :]  # past the body: the line is not reused
            self._left -= len(pieces[0])
            if self._left == 0:
                self._framing = "ended"
        else:
            pieces = [data]
        if pieces:
            self._sink(pieces)
        if self._framing == "ended":
            self._finish()

    def _unchunk(self, data: bytes) -> list[bytes]:
        """The chunks' data in ``data`` (what is left of a partial frame is kept)."""
        buf = self._buf + data if self._buf else data
        out: list[bytes] = []
        pos, n = 0, len(buf)
        while pos < n and self._framing == "chunked":
            if self._left:
                take = min(self._left, n - pos)
                out.append(buf if take == n else buf[pos : pos + take])
                pos, self._left = pos + take, self._left - take
                self._crlf = self._left == 0
                continue
            end = buf.find(b"\r\n", pos)
            if end < 0:
                break
            line, pos = buf[pos:end], end + 2
            if self._crlf:  # the CRLF that closes a chunk's data
                self._crlf = False
                if line:
                    self._ended(UpstreamCut("upstream sent bad chunked framing"))
                    self.abort()
                    return out
            elif self._trailers:
                if not line:
                    self._framing = "ended"
            else:
                self._chunk_size(line)
        self._buf = buf[pos:]
        if len(self._buf) > MAX_HEAD:
            self._ended(UpstreamCut("upstream sent bad chunked framing"))
            self.abort()
        return out

    def _chunk_size(self, line: bytes) -> None:
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            self._ended(UpstreamCut(f"upstream sent a bad chunk size {line[:40]!r}"))
            self.abort()
            return
        self._left = size
        self._trailers = size == 0

    def _finish(self) -> None:
        clean = self._framing != "close" and not self._buf  # nothing past the body
        self.reusable = self._keep and clean and not self.closed
        self._framing = "ended"
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _ended(self, exc: Exception) -> None:
        """The connection went: the end of a close-delimited body, else an error."""
        if self._head is not None and not self._head.done():
            self._head.set_exception(exc)
        elif self._sink is None:
            self._lost = self._lost or exc  # not reading the body yet: ``body`` ends it
        elif self._framing == "close":
            self._finish()
        elif self._done is not None and not self._done.done():
            self._done.set_exception(exc)

    def _arm(self) -> None:
        self._watch = self.loop.call_at(self._last + self.timeout, self._check)

    def _check(self) -> None:
        """Between two pieces: more than ``timeout`` seconds of silence ends the body."""
        if self._done is None or self._done.done():
            return
        if self.loop.time() - self._last >= self.timeout:
            self._done.set_exception(UpstreamTimeout())
            self.abort()
        else:
            self._arm()


class Pool:
    """Kept-alive upstream connections, per (scheme, host, port)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.connect_timeout = min(timeout, 30.0)
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._ssl: ssl.SSLContext | None = None

    async def open(
        self, method: str, url: httpx.URL, headers: list[tuple[str, str]], body: bytes
    ) -> Connection:
        """Send the request on a kept-alive connection (once more on a new one if that
        one turns out to have been closed) or a new one; returns once the head is in."""
        request = _request_bytes(method, url, headers, body)
        head_only = method == "HEAD"
        conn = self._take(url)
        if conn is not None:
            with contextlib.suppress(UpstreamCut):
                await conn.exchange(request, head_only)
                return conn
        conn = await self._connect(url)
        if _cancel_asked():  # a cancel ``wait_for`` dropped (the connect had just ended)
            conn.abort()
            raise asyncio.CancelledError
        await conn.exchange(request, head_only)
        return conn

    def _release(self, key: tuple[str, str, int], conn: Connection) -> None:
        """Back to the pool if the response ended cleanly and the upstream keeps it open."""
        if conn.reusable and not conn.closed:
            self._idle.setdefault(key, []).append(conn)
        else:
            conn.abort()

    def close(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.abort()
        self._idle.clear()

    def _take(self, url: httpx.URL) -> Connection | None:
        idle = self._idle.get(_key(url), [])
        while idle:
            conn = idle.pop()
            if not conn.closed and not conn.stray:
                return conn
            conn.abort()
        return None

    async def _connect(self, url: httpx.URL) -> Connection:
        loop = asyncio.get_running_loop()
        scheme, host, port = _key(url)
        tls = self._context() if scheme == "https" else None
        try:
            _transport, conn = await asyncio.wait_for(
                loop.create_connection(
                    lambda: Connection(loop, self.timeout),
                    host,
                    port,
                    ssl=tls,
                    server_hostname=host if tls else None,
                ),
                self.connect_timeout,
            )
        except TimeoutError:
            raise UpstreamTimeout() from None
        except (OSError, ssl.SSLError) as exc:
            raise UpstreamUnreachable(repr(exc)) from None
        key = (scheme, host, port)
        conn.release = lambda c: self._release(key, c)
        return conn

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl


def _cancel_asked() -> bool:
    """Whether this task was asked to cancel and the cancel was lost on the way: Python
    3.11's ``asyncio.wait_for`` returns the result when the awaited step ended in the same
    turn as the cancel (fixed in 3.12), and the task goes on as if nothing was asked."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _key(url: httpx.URL) -> tuple[str, str, int]:
    port = url.port or (443 if url.scheme == "https" else 80)
    return url.scheme, url.host, port


def _request_bytes(
    method: str, url: httpx.URL, headers: list[tuple[str, str]], body: bytes
) -> bytes:
    target = url.raw_path.decode("latin-1") or "/"
    host = url.host if url.port is None else f"{url.host}:{url.port}"
    lines = [f"{method} {target} HTTP/1.1", f"host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _head(raw: bytes) -> tuple[Head, str]:
    lines = raw.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/") or not code.isdigit():
        raise ValueError(repr(lines[0][:80]))
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"header line {line[:80]!r}")
        headers.append((name.strip(), value.strip()))
    return Head(int(code), reason, headers), version


def _framing(head: Head, head_only: bool) -> str:
    if head_only or head.status in (204, 304) or head.status < 200:
        return ""
    if "chunked" in head.header("transfer-encoding").lower():
        return "chunked"
    length = head.header("content-length")
    if length.isdigit():
        return "length" if int(length) else ""
    return "close"
