"""The recording proxy: agent → here → upstream, bytes passed through as they arrive.

Built on asyncio streams (the listening side, ``core/proxy/http.py``) and httpx (the
upstream side: TLS, HTTP/1.1 keep-alive pooling, proxies from the environment, and
``aiter_raw`` yields the upstream bytes undecoded so they reach the client unchanged). Each
upstream piece is written to the client and drained before the recorder sees it, so
recording never holds a chunk back. Store writes run on one worker thread in order, and so
does reading the response for the record (``core/proxy/tap.py:HeldTap``): between two
chunks the event loop only writes, drains and holds the piece.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from core.fields_json import FieldsJson
from core.llm.connections import OpenConnections
from core.proxy.assemble import Assembled, assembly_for
from core.proxy.http import BadRequest, ClientReader, Request, head_bytes, listen, read_request
from core.proxy.messages import family_of
from core.proxy.recording import INCOMPLETE, TRACE_HEADER, Outcome, Pending, Recorder, scrub
from core.proxy.relay import ClientGone, Relay
from core.proxy.tap import HeldTap, ResponseTap
from core.proxy.upstream import (
    Exchange,
    Head,
    Pool,
    UpstreamCut,
    UpstreamTimeout,
    UpstreamUnreachable,
)
from core.proxy.upstream_httpx import HttpxExchange, env_proxied
from core.store import Store
from core.store.headers import HOP_BY_HOP, is_secret_header


@dataclass
class ProxyStatus(FieldsJson):
    """One row of a Sources pane: what the proxy is doing and what it has seen."""

    name: str
    state: str
    """starting | listening | stopped | failed"""
    address: str
    upstream: str
    traces_seen: int = 0
    calls: int = 0
    in_flight: int = 0
    errors: int = 0
    recovered_incomplete: int = 0
    last_error: str | None = None


CallListener = Callable[[dict[str, Any]], None]


class ProxyServer:
    def __init__(
        self,
        store: Store,
        upstream: str,
        host: str = "127.0.0.1",
        port: int = 8787,
        timeout: float = 600.0,
        name: str = "proxy",
        on_call: CallListener | None = None,
    ) -> None:
        self.upstream = _clean_upstream(upstream)
        self.host, self.port, self.timeout = host, port, timeout
        self.recorder = Recorder(store, self.upstream)
        self.on_call = on_call
        self.status = ProxyStatus(name, "starting", f"{host}:{port}", self.upstream)
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="ctxlens-proxy-store")
        self._conns = OpenConnections()
        self._pool = Pool(timeout)
        self._client: httpx.AsyncClient | None = None
        """Only for an upstream behind an environment proxy (``_open``)."""
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- lifecycle -----------------------------------------------------------------------
    async def serve(self, ready: Callable[[ProxyServer], None] | None = None) -> None:
        """Listen until ``stop()``; ``ready`` is called once the port is bound."""
        self._stopping = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        try:
            self.status.recovered_incomplete = await self._store(self.recorder.recover)
            server = await listen(self._connection, self.host, self.port)
        except Exception as exc:
            self.status.state, self.status.last_error = "failed", str(exc)
            raise
        self.port = server.sockets[0].getsockname()[1]
        self.status.address, self.status.state = f"{self.host}:{self.port}", "listening"
        if ready is not None:
            ready(self)
        try:
            await self._stopping.wait()
        finally:
            await self._shutdown(server)

    async def _shutdown(self, server: asyncio.Server) -> None:
        server.close()
        await self._conns.end_all()
        await server.wait_closed()
        self._pool.close()
        if self._client is not None:
            await self._client.aclose()
        with contextlib.suppress(Exception):  # requests cut short by this stop: incomplete now
            await self._store(self.recorder.recover)
        self._worker.shutdown(wait=True)
        self.status.state = "stopped"

    def request_stop(self) -> None:
        """Stop from any thread (or a signal handler)."""
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stopping.set)

    def start(self) -> ProxyServer:
        """Serve on a thread of its own (the GUI, tests, the bench)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(self.serve(lambda _: ready.set()))
            except BaseException as exc:
                failure.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name="ctxlens-proxy", daemon=True)
        self._thread.start()
        ready.wait(30)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        self.request_stop()
        self.join()
        self._thread = None

    def join(self, timeout: float = 30.0) -> None:
        """Wait until the proxy serving on its own thread has stopped."""
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _store(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)

    # -- connections ---------------------------------------------------------------------
    async def _connection(self, reader: ClientReader, writer: asyncio.StreamWriter) -> None:
        async def exchange() -> bool:
            try:
                req = await read_request(reader, writer)
            except BadRequest as exc:
                writer.write(_json_response(400, {"error": {"message": str(exc)}}, False))
                await writer.drain()
                return False
            return req is not None and await self._exchange(req, reader, writer)

        await self._conns.serve(writer, exchange)

    async def _exchange(
        self, req: Request, reader: ClientReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Forward one request and stream its response back; whether to keep the connection."""
        api = family_of(req.method, req.path)
        pending = await self._begin(api, req) if api is not None else None
        self.status.in_flight += 1
        try:
            outcome, keep, tap = await self._forward(req, reader, writer, pending)
        finally:
            self.status.in_flight -= 1
        if pending is not None:
            await self._finish(pending, outcome, tap)
        if outcome.state == "incomplete":  # stopped mid-response, recorded: the stop goes on
            raise asyncio.CancelledError
        return keep and req.keep_alive

    async def _begin(self, api: str, req: Request) -> Pending | None:
        try:
            pending: Pending = await self._store(self.recorder.begin, api, req, _secrets(req))
        except Exception as exc:  # the agent's call still goes through, unrecorded
            self._error(f"recording the request failed: {exc}")
            return None
        self.status.traces_seen = len(self.recorder.traces_seen)
        return pending

    async def _finish(self, pending: Pending, outcome: Outcome, tap: HeldTap | None) -> None:
        try:
            await self._store(self._record, pending, outcome, tap)
        except Exception as exc:
            self._error(f"recording the response failed: {exc}")
            return
        self.status.calls += 1
        if outcome.state != "done":
            self._error(f"{pending.trace_id} call {pending.call_index}: {outcome.state}")
        if self.on_call is not None:
            self.on_call(_call_event(pending, outcome))

    def _record(self, pending: Pending, o: Outcome, tap: HeldTap | None) -> None:
        """On the worker thread: read the response as relayed, then store the outcome."""
        if tap is not None:
            o.assembled = _assembled(tap)
            if o.status is not None and o.status >= 400 and o.error is None:
                o.error = f"upstream HTTP {o.status}: {tap.tap.plain_text(2000)}"
        o.error = scrub(o.error, pending.secrets)
        self.recorder.finish(pending, o)

    def _held_tap(self, head: Head, pending: Pending | None) -> HeldTap | None:
        tap = _tap(head, pending)
        if tap is None:
            return None
        return HeldTap(tap, self._worker.submit)

    def _error(self, text: str) -> None:
        self.status.errors += 1
        self.status.last_error = text

    # -- forwarding ----------------------------------------------------------------------
    async def _forward(
        self,
        req: Request,
        reader: ClientReader,
        writer: asyncio.StreamWriter,
        pending: Pending | None,
    ) -> tuple[Outcome, bool, HeldTap | None]:
        started = time.perf_counter()
        try:
            up = await self._open_for(req, reader)
        except ClientGone:
            waited = time.perf_counter() - started
            o = Outcome("disconnected", None, Assembled())
            o.error = f"client disconnected before the response began ({waited:.1f} s)"
            return o, False, None
        except UpstreamTimeout:
            message = f"timeout: no response from upstream within {self.timeout:g} s"
            return (*await _fail(writer, 504, "timeout", message), None)
        except (UpstreamUnreachable, UpstreamCut) as exc:
            message = f"upstream unreachable: {exc}"
            return (*await _fail(writer, 502, "unreachable", message), None)
        tap = self._held_tap(up.head, pending)
        try:
            return (
                *await self._relay(up, reader, writer, tap, started, req.method == "HEAD"),
                tap,
            )
        finally:
            await up.close()

    async def _open_for(self, req: Request, reader: ClientReader) -> Exchange:
        """``_open``, given up (``ClientGone``) the moment the agent goes: an agent that
        gives up on a slow model closes its connection, and the upstream request is dropped
        then, not when the upstream answers or the timeout ends (600 s by default). The
        opening is raced against the agent's leaving rather than cancelled from its
        callback: Python 3.11's ``wait_for`` drops a cancel that meets a finished step
        (a connect, say), and the request would go on without anyone waiting for it."""
        if reader.gone:  # it left while the request was being recorded
            raise ClientGone()
        gone = asyncio.get_running_loop().create_future()
        opening = asyncio.ensure_future(self._open(req))

        def went() -> None:
            if not gone.done():
                gone.set_result(None)

        reader.on_gone = went
        try:
            await asyncio.wait({opening, gone}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the proxy stops: nothing opened is left open
            _drop(opening)
            raise
        finally:
            reader.on_gone = None
            gone.cancel()
        if reader.gone:  # also when the head came in the same turn: no one reads it
            _drop(opening)
            raise ClientGone()
        return opening.result()  # or the upstream's error

    async def _open(self, req: Request) -> Exchange:
        """The request sent upstream, its response head in: on a connection of our own
        (``core/proxy/upstream.py``), or through httpx when the environment names a proxy."""
        url = httpx.URL(_target(self.upstream, req.target))
        headers = _upstream_headers(req)
        if env_proxied(url):
            return await HttpxExchange.open(self._httpx(), req.method, url, headers, req.body)
        return await self._pool.open(req.method, url, headers, req.body)

    def _httpx(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 30.0))
            self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        return self._client

    async def _relay(
        self,
        up: Exchange,
        reader: ClientReader,
        writer: asyncio.StreamWriter,
        tap: HeldTap | None,
        started: float,
        head_only: bool,
    ) -> tuple[Outcome, bool]:
        """The upstream response to the client piece by piece (``core/proxy/relay.py``),
        each piece held for the recorder (read on the worker thread: ``_record``)."""
        status = up.head.status
        o = Outcome("done" if status < 400 else "error", status, Assembled())
        o.first_byte_ms = (time.perf_counter() - started) * 1000
        relay = Relay(writer, tap, o)
        relay.pause, relay.resume, relay.on_gone = up.pause, up.resume, up.stop_body
        bodiless = head_only or status in (204, 304) or status < 200
        relay.start(status, up.head.reason, up.head.headers, bodiless)
        keep = True
        reader.on_gone = relay.client_gone  # a stalled upstream is not waited on for it
        try:
            if reader.gone:
                relay.client_gone()
            await up.body(relay.pieces)
            await relay.end()
        except UpstreamTimeout:
            o.state, keep = "timeout", False
            o.error = "timeout: upstream stopped sending mid-response"
            writer.transport.abort()
        except UpstreamCut as exc:
            o.state, o.error, keep = "error", f"upstream cut the response: {exc}", False
            writer.transport.abort()
        except (ClientGone, ConnectionError, RuntimeError):
            o.state, keep = "disconnected", False
            o.error = f"client disconnected after {o.chunks} chunks"
        except asyncio.CancelledError:  # the proxy stops: what arrived is recorded first
            o.state, o.error, keep = "incomplete", INCOMPLETE, False
            writer.transport.abort()
        finally:
            reader.on_gone = None
        return o, keep


def _drop(opening: asyncio.Future[Exchange]) -> None:
    """An upstream opening no one will read: cancelled, and closed (its line dropped) if
    it opened anyway, now or when it does."""
    if not opening.done():
        opening.cancel()
    opening.add_done_callback(_close_opened)


def _close_opened(opening: asyncio.Future[Exchange]) -> None:
    if not opening.cancelled() and opening.exception() is None:
        closing = asyncio.ensure_future(opening.result().close())
        _CLOSING.add(closing)
        closing.add_done_callback(_CLOSING.discard)


_CLOSING: set[asyncio.Future[None]] = set()
"""Closes of openings no one read, running (a task with no reference may be collected)."""


def _tap(head: Head, pending: Pending | None) -> ResponseTap | None:
    if pending is None:
        return None
    return ResponseTap(
        assembly_for(pending.api, pending.model),
        head.header("content-type"),
        head.header("content-encoding"),
    )


def _assembled(tap: HeldTap) -> Assembled:
    try:
        tap.settle()
        return tap.tap.finish()
    except Exception as exc:  # a response the assembler cannot read is recorded as such
        return Assembled(error=f"response not assembled: {exc!r}")


async def _fail(
    writer: asyncio.StreamWriter, status: int, state: str, message: str
) -> tuple[Outcome, bool]:
    body = {"error": {"message": message, "type": "ctxlens_proxy_error"}}
    with contextlib.suppress(ConnectionError):
        writer.write(_json_response(status, body, True))
        await writer.drain()
    return Outcome(state, status, Assembled(), message), True


def _json_response(status: int, body: Any, keep: bool) -> bytes:
    data = json.dumps(body).encode("utf-8")
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(data))),
        ("connection", "keep-alive" if keep else "close"),
    ]
    return head_bytes(status, "", headers) + data


def _upstream_headers(req: Request) -> list[tuple[str, str]]:
    return [
        (k, v) for k, v in req.headers if k.lower() not in HOP_BY_HOP and k.lower() != TRACE_HEADER
    ]


def _secrets(req: Request) -> list[str]:
    out: list[str] = []
    for k, v in req.headers:
        if is_secret_header(k):
            out.append(v)
            scheme, _, rest = v.partition(" ")
            if rest and scheme.lower() in ("bearer", "basic", "token"):
                out.append(rest.strip())
    return out


def _clean_upstream(upstream: str) -> str:
    """The upstream as stored and shown: no credentials, no query."""
    from core.errors import InvalidInputError

    try:
        url = httpx.URL(upstream)
    except httpx.InvalidURL as exc:
        raise InvalidInputError(f"--upstream {upstream!r}: not a URL ({exc})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise InvalidInputError(f"--upstream {upstream!r}: not an http(s) URL")
    if url.port is not None and not 0 < url.port < 65536:  # every call failed with a traceback
        raise InvalidInputError(f"--upstream: port {url.port} is not between 1 and 65535")
    return str(url.copy_with(username=None, password=None, query=None, fragment=None)).rstrip("/")


def _target(upstream: str, target: str) -> str:
    """Upstream URL for a request target: the upstream path is a prefix unless the client's
    path already starts with it (``--upstream https://api.openai.com/v1`` and an SDK base
    URL ending in ``/v1`` give one ``/v1``, not two)."""
    base = httpx.URL(upstream)
    prefix = base.path.rstrip("/")
    path = target if not prefix or target.startswith(prefix + "/") else prefix + target
    return str(base.copy_with(raw_path=path.encode("latin-1")))


def _call_event(p: Pending, o: Outcome) -> dict[str, Any]:
    return {
        "event": "call",
        "trace": p.trace_id,
        "call": p.call_index,
        "api": p.api,
        "model": o.assembled.model or p.model,
        "status": o.status,
        "outcome": o.state,
        "complete": o.assembled.complete,
        "chunks": o.chunks,
        "error": o.error,
    }
