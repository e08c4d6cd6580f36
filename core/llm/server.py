"""A real OpenAI-compatible HTTP server on 127.0.0.1 that serves any backend model.

This is the embedded default: the demo and every test talk to a model over the real wire
protocol (HTTP/1.1, JSON, SSE with chunked transfer encoding), with no API key. It is plain
asyncio streams in a background thread with its own event loop, so sync tests, asyncio
tests and the Qt app can all use it; ``stop()`` closes every connection and joins the
thread. Faults are queued on ``server.faults`` (``core/llm/faults.py``); every request is
logged in ``server.requests`` so tests can count what actually reached the "provider".
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from core.errors import CtxlensError
from core.llm.backend import BackendReply, ChatBackend, ChatRequest, UsageMeter
from core.llm.connections import OpenConnections
from core.llm.faults import Fault, FaultBoard, prompt_too_long_body
from core.llm.secrets import Secret
from core.llm.settings import ModelSettings
from core.llm.wire import completion_body, stream_chunks, validate_messages

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class ServedRequest:
    """One request the server received and how it answered."""

    index: int
    model: str
    stream: bool
    messages: tuple[dict[str, Any], ...]
    status: int
    fault: str | None


@dataclass(frozen=True)
class _Http:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class ModelServer:
    """Serve ``backend`` as ``/v1/chat/completions`` on ``host:port`` (0 = any free port).

    ``api_key``: require ``Authorization: Bearer <key>`` (a 401 otherwise, which echoes the
    key it got, as the worst provider would). ``context_window``: answer 400 "maximum context
    length" when a prompt is larger, like a real endpoint. ``strict``: reject message lists
    that break tool-call pairing with OpenAI's own 400 texts. ``on_request``: called (from
    the server thread) with each request as it is answered; ``log_limit``: keep only that
    many in ``requests`` (a long-running ``ctxlens serve --model``).
    """

    def __init__(
        self,
        backend: ChatBackend,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        context_window: int | None = None,
        strict: bool = True,
        text_chunk: int = 24,
        args_chunk: int = 16,
        meter: UsageMeter | None = None,
        on_request: Callable[[ServedRequest], None] | None = None,
        log_limit: int | None = None,
    ) -> None:
        self.backend = backend
        self.host = host
        self._port = port
        self._api_key = Secret(api_key) if api_key else None
        self.context_window = context_window
        self.strict = strict
        self.text_chunk = text_chunk
        self.args_chunk = args_chunk
        self.meter = meter or UsageMeter()
        self.faults = FaultBoard()
        self._log: deque[ServedRequest] = deque(maxlen=log_limit)
        self._served = 0
        self._on_request = on_request
        self._log_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._conns = OpenConnections()
        self._error: BaseException | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """Base URL for clients, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self._port}/v1"

    def settings(self, model: str = "scripted", **fields: Any) -> ModelSettings:
        """Client settings pointing here (no key unless given)."""
        return ModelSettings(base_url=self.url, model=model, **fields)

    def start(self) -> ModelServer:
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(ready,), name="ctxlens-model-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(10) or self._error is not None:
            self.stop()
            error = self._error
            if isinstance(error, OSError):  # a port in use, an address not of this host
                why = os.strerror(error.errno) if error.errno else str(error)
                raise CtxlensError(f"cannot listen on {self.host}:{self._port}: {why}")
            raise RuntimeError(f"model server did not start: {error!r}")
        return self

    def stop(self) -> None:
        loop, stopping, thread = self._loop, self._stopping, self._thread
        if loop is not None and stopping is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stopping.set)
        if thread is not None:
            thread.join(10)
        self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve(ready))
        except BaseException as exc:  # reported by start()
            self._error = exc
            ready.set()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve(self, ready: threading.Event) -> None:
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._handle, self.host, self._port)
        self._port = server.sockets[0].getsockname()[1]
        ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            await self._conns.end_all()
            await server.wait_closed()
            await asyncio.sleep(0)  # let closed transports finish

    # -- requests --------------------------------------------------------------------------

    @property
    def requests(self) -> list[ServedRequest]:
        with self._log_lock:
            return list(self._log)

    def clear_requests(self) -> None:
        with self._log_lock:
            self._log.clear()
            self._served = 0

    def _record(self, chat: ChatRequest, status: int, fault: Fault | None) -> None:
        kind = None if fault is None else fault.kind
        with self._log_lock:
            served = ServedRequest(
                self._served, chat.model, chat.stream, chat.messages, status, kind
            )
            self._served += 1
            self._log.append(served)
        if self._on_request is not None:
            self._on_request(served)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def exchange() -> bool:
            req = await _read_request(reader)
            return req is not None and await self._respond(req, writer)

        await self._conns.serve(writer, exchange, quiet=(ValueError,))  # ValueError: bad HTTP

    async def _respond(self, req: _Http, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; return whether the connection stays open."""
        keep = req.headers.get("connection", "").lower() != "close"
        path = req.path.split("?", 1)[0].rstrip("/")
        if req.method == "GET" and path in ("/v1/models", "/models"):
            models = {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
            return await _send_json(writer, 200, models, keep)
        if req.method != "POST" or path not in CHAT_PATHS:
            return await _send_json(
                writer, 404, _err(f"Unknown path {req.path}", "not_found"), keep
            )
        if not self._authorized(req):
            got = req.headers.get("authorization", "").removeprefix("Bearer ").strip()
            msg = f"Incorrect API key provided: {got or '(none)'}."
            return await _send_json(writer, 401, _err(msg, "invalid_request_error"), keep)
        try:
            body = json.loads(req.body)
            if not isinstance(body, dict):
                raise ValueError("body is not an object")
        except ValueError:
            msg = "We could not parse the JSON body of your request."
            return await _send_json(writer, 400, _err(msg, "invalid_request_error"), keep)
        return await self._chat(ChatRequest.from_body(body), writer, keep)

    def _authorized(self, req: _Http) -> bool:
        if self._api_key is None:
            return True
        return req.headers.get("authorization", "") == "Bearer " + self._api_key.reveal()

    async def _chat(self, chat: ChatRequest, writer: asyncio.StreamWriter, keep: bool) -> bool:
        problem = validate_messages(chat.messages) if self.strict else None
        if problem is not None:
            self._record(chat, 400, None)
            return await _send_json(writer, 400, _err(problem, "invalid_request_error"), keep)
        size = self.meter.measure(chat.messages)
        if self.context_window is not None and size.tokens > self.context_window:
            self._record(chat, 400, None)
            body = prompt_too_long_body("openai", size.tokens, self.context_window)
            return await _send_json(writer, 400, body, keep)
        fault = self.faults.take(chat.model)
        if fault is not None and fault.kind == "http_error":
            self._record(chat, fault.status, fault)
            return await _send_json(writer, fault.status, fault.body, keep, dict(fault.headers))
        self._record(chat, 200, fault)
        if fault is not None and fault.kind in ("trickle", "silent"):
            return await _hold(writer, fault, chat.stream)
        if fault is not None and fault.kind == "slow" and fault.during == "headers":
            await asyncio.sleep(fault.delay_s)
        try:
            reply = await self._reply(chat)
        except Exception as exc:
            return await _send_json(
                writer, 500, _err(f"backend error: {exc}", "server_error"), keep
            )
        self.meter.remember(size)
        usage = reply.usage if reply.usage is not None else self.meter.usage(size, reply)
        model = reply.model or chat.model
        rid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if chat.stream:
            include = bool((chat.body.get("stream_options") or {}).get("include_usage"))
            chunks = stream_chunks(
                reply,
                model,
                rid,
                created,
                usage if include else None,
                self.text_chunk,
                self.args_chunk,
            )
            return await _send_stream(writer, chunks, fault, keep)
        body = completion_body(reply, model, rid, created, usage)
        return await _send_json(writer, 200, body, keep, fault=fault)

    async def _reply(self, chat: ChatRequest) -> BackendReply:
        result = self.backend.reply(chat)
        if inspect.isawaitable(result):
            result = await result
        assert isinstance(result, BackendReply)
        return result


def _err(message: str, etype: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": etype, "param": None, "code": None}}


async def _read_request(reader: asyncio.StreamReader) -> _Http | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return _Http(method, path, headers, body)


def _status_line(status: int) -> bytes:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Overloaded" if status == 529 else "Error"
    return f"HTTP/1.1 {status} {phrase}\r\n".encode("ascii")


async def _send_json(
    writer: asyncio.StreamWriter,
    status: int,
    body: Any,
    keep: bool,
    headers: dict[str, str] | None = None,
    fault: Fault | None = None,
) -> bool:
    data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
    if fault is not None and fault.kind == "malformed":
        data = data[: max(1, len(data) // 2)]  # a complete response whose JSON is truncated
    length = len(data)
    head = [
        ("content-type", "application/json"),
        ("content-length", str(length)),
        ("connection", "keep-alive" if keep else "close"),
        *(headers or {}).items(),
    ]
    writer.write(_status_line(status) + _headers(head))
    if fault is not None and fault.kind == "cut":
        writer.write(data[: len(data) // 2])
        await writer.drain()
        writer.transport.abort()
        return False
    writer.write(data)
    await writer.drain()
    return keep


def _headers(pairs: list[tuple[str, str]]) -> bytes:
    return "".join(f"{k}: {v}\r\n" for k, v in pairs).encode("latin-1") + b"\r\n"


async def _send_stream(
    writer: asyncio.StreamWriter, chunks: list[dict[str, Any]], fault: Fault | None, keep: bool
) -> bool:
    head = [
        ("content-type", "text/event-stream; charset=utf-8"),
        ("cache-control", "no-cache"),
        ("transfer-encoding", "chunked"),
        ("connection", "keep-alive" if keep else "close"),
    ]
    writer.write(_status_line(200) + _headers(head))
    events = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    events.append("data: [DONE]\n\n")
    for i, event in enumerate(events):
        if fault is not None and i == fault.after_chunks:
            if fault.kind == "cut":
                return await _cut(writer, fault.clean, keep)
            if fault.kind == "malformed":
                _write_chunk(writer, 'data: {"id": "chatcmpl-x", "choices": [{"delta": {"con\n\n')
            if fault.kind == "stream_error":
                _write_chunk(writer, f"event: error\ndata: {json.dumps(fault.body)}\n\n")
                return await _cut(writer, True, keep)
        if fault is not None and fault.kind == "slow" and fault.during == "stream" and i == 1:
            await writer.drain()
            await asyncio.sleep(fault.delay_s)
        _write_chunk(writer, event)
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return keep


async def _hold(writer: asyncio.StreamWriter, fault: Fault, stream: bool) -> bool:
    """A ``silent`` or ``trickle`` fault: hold the connection without ever replying, then
    drop it (the client has usually hung up long before)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + fault.delay_s
    if fault.kind == "trickle":
        content = "text/event-stream; charset=utf-8" if stream else "application/json"
        head = [("content-type", content), ("transfer-encoding", "chunked")]
        writer.write(_status_line(200) + _headers(head))
        every = float(fault.body or 1.0)
        while loop.time() < until:
            _write_chunk(writer, ": keep-alive\n\n" if stream else " ")
            await writer.drain()
            await asyncio.sleep(every)
    else:
        await asyncio.sleep(fault.delay_s)
    writer.transport.abort()
    return False


def _write_chunk(writer: asyncio.StreamWriter, text: str) -> None:
    data = text.encode("utf-8")
    writer.write(f"{len(data):X}\r\n".encode("ascii") + data + b"\r\n")


async def _cut(writer: asyncio.StreamWriter, clean: bool, keep: bool) -> bool:
    await writer.drain()
    if clean:  # a properly ended HTTP body that lacks the end of the message
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return keep
    writer.transport.abort()
    return False
