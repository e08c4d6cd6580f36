"""``ctxlens serve --otlp``: an OTLP/HTTP trace receiver on 127.0.0.1 (a ``Source``).

``POST /v1/traces`` with protobuf or JSON, optionally gzip: 200 with an
``ExportTraceServiceResponse`` (``partial_success`` counts spans without ids), 400 for a
body that does not decode, 405 for another method, 404 for another path, 411 without a
``Content-Length``, 413 over ``max_bytes`` (compressed or not), 415 for another content
type or encoding, 503 when the store cannot take the write (an exporter retries 503).
Error bodies are ``google.rpc.Status`` in the request's encoding. Standard library HTTP
server, one thread per request; writes are serialised by ``SpanSink``.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from core.errors import CtxlensError, InvalidInputError
from core.importers.counting import fill_pending
from core.live.otlp_decode import (
    JSON,
    PROTOBUF,
    OtlpError,
    decode,
    media_type,
    response,
    status_body,
)
from core.live.otlp_traces import SpanSink
from core.live.source import Listener, SourceStatus, State, Tally
from core.store.store import Store

PATH = "/v1/traces"
MAX_BYTES = 32 << 20
DEFAULT_PORT = 4318


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (host defaults to loopback) or an error naming what was given."""
    host, _, port = text.strip().rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise InvalidInputError(f"{text!r}: expected HOST:PORT, e.g. 127.0.0.1:{DEFAULT_PORT}")
    return host.strip("[]") or "127.0.0.1", int(port)


class OtlpReceiver:
    kind = "otlp"

    def __init__(
        self,
        store: Store,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        listener: Listener | None = None,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.store = store
        self.host = host
        self.port = port
        self.listener = listener
        self.max_bytes = max_bytes
        self.sink = SpanSink(store)
        self.tally = Tally()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        return f"http://{self.host}:{self.port}{PATH}"

    def status(self) -> SourceStatus:
        running = self._thread is not None and self._thread.is_alive()
        state: State = (
            "running"
            if running
            else ("error" if self.tally.last_error and not running else "stopped")
        )
        return SourceStatus(
            kind=self.kind,
            name="OTLP receiver",
            state=state,
            address=self.address,
            traces_seen=self.tally.traces_seen,
            errors=self.tally.errors,
            last_error=self.tally.last_error,
        )

    def start(self) -> None:
        """Bind and serve on a thread; a port in use is a ``CtxlensError`` naming it."""
        if self._server is not None:
            return
        try:
            server = ThreadingHTTPServer((self.host, self.port), _handler(self))
        except OSError as exc:
            self.tally.failed(f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}")
            raise CtxlensError(self.tally.last_error) from None
        server.daemon_threads = True
        self.port = int(server.server_address[1])
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, name="ctxlens-otlp", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    # -- one request --------------------------------------------------------------------
    def export(
        self, body: bytes, content_type: str | None, encoding: str | None
    ) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` of the answer to one export request."""
        kind = (
            media_type(content_type) if media_type(content_type) in (JSON, PROTOBUF) else PROTOBUF
        )
        try:
            req = decode(body, content_type, encoding, self.max_bytes)
            changes, rejected = self.sink.add(req.doc, "otlp request")
        except OtlpError as exc:
            self.tally.failed(exc.message)
            return exc.status, kind, status_body(kind, exc.status, exc.message)
        except CtxlensError as exc:
            self.tally.failed(str(exc))
            return 503, kind, status_body(kind, 503, f"store unavailable: {exc}")
        for change in changes:
            self.tally.saw(change.trace_id)
        if changes:
            fill_pending(self.store, [c.trace_id for c in changes])
        if self.listener is not None:
            for change in changes:
                self.listener(change)
        note = f"{rejected} span(s) without a trace or span id" if rejected else ""
        return 200, req.content_type, response(req.content_type, rejected, note)


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ctxlens-otlp"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # requests are not logged (their headers may hold credentials)

        def _send(
            self, status: int, kind: str, body: bytes, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _refuse(self, status: int, message: str, extra: dict[str, str] | None = None) -> None:
            kind = media_type(self.headers.get("Content-Type"))
            kind = kind if kind in (JSON, PROTOBUF) else PROTOBUF
            receiver.tally.failed(message)
            self.close_connection = True
            self._send(status, kind, status_body(kind, status, message), extra)

        def do_POST(self) -> None:
            if self.path.split("?", 1)[0] != PATH:
                return self._refuse(404, f"no such endpoint {self.path!r} (traces: {PATH})")
            length = self.headers.get("Content-Length")
            if length is None or not length.isdigit():
                return self._refuse(411, "Content-Length required")
            if int(length) > receiver.max_bytes:
                return self._refuse(413, f"body over {receiver.max_bytes} bytes")
            body = self.rfile.read(int(length))
            status, kind, out = receiver.export(
                body, self.headers.get("Content-Type"), self.headers.get("Content-Encoding")
            )
            self._send(status, kind, out)

        def _wrong_method(self) -> None:
            self._refuse(405, f"{self.command} not allowed (POST {PATH})", {"Allow": "POST"})

        do_GET = do_PUT = do_DELETE = do_PATCH = _wrong_method

    return Handler
