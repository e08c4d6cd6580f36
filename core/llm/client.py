"""OpenAI-compatible chat-completions client on httpx (SPEC LLM-1).

One ``ChatClient`` per endpoint. ``complete`` makes exactly one HTTP attempt, streaming
(SSE) or plain, and returns a complete ``ModelResponse`` or raises a classified
``ModelCallError``; retries and fallback live in ``core/llm/retry.py``. ``stream`` yields
the same call as events for the UI. The key goes into the ``Authorization`` header and
nowhere else; every error text is redacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypedDict, Unpack

import httpx
import orjson

from core.llm.assemble import StreamAssembler, parse_completion
from core.llm.cancel import race_cancel, raise_if_cancelled
from core.llm.errors import ErrorKind, ModelCallError, classify, retry_after_seconds
from core.llm.response import ModelResponse, StreamDone, StreamEvent
from core.llm.secrets import redact
from core.llm.settings import ModelSettings
from core.llm.sse import SseDecoder

Messages = Sequence[Mapping[str, Any]]
EventCallback = Callable[[StreamEvent], None]


class RequestArgs(TypedDict, total=False):
    """What a chat request carries besides its messages (``None`` or absent: the settings'
    model, no tools, the provider's tool choice, no extra body keys). ``complete``,
    ``stream`` and ``build_body`` take these keywords and pass them on as they are."""

    model: str | None
    tools: Sequence[Mapping[str, Any]] | None
    tool_choice: Any
    params: Mapping[str, Any] | None


class ChatClient:
    """Async client for one OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        http: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self._owns_http = http is None
        self._http = http or httpx.AsyncClient(
            timeout=httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s),
            transport=transport,
            headers=self._headers(),
        )
        self._per_request = None if http is None else self._headers()
        """Headers sent with each request: on a client of our own they are its headers
        (httpx merges per-request headers into new ``Headers`` on every call, ~20 µs of
        CPU, ``bench/bench_llm.py``); a client passed in is shared, so they go per request."""

    def __repr__(self) -> str:
        return f"ChatClient(base_url={self.settings.base_url!r}, model={self.settings.model!r})"

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def build_body(
        self, messages: Messages, *, stream: bool = False, **request: Unpack[RequestArgs]
    ) -> dict[str, Any]:
        """The JSON body sent (no key in it; safe to log)."""
        model = request.get("model") or self.settings.model
        body: dict[str, Any] = {"model": model, "messages": list(messages)}
        if tools := request.get("tools"):
            body["tools"] = list(tools)
        if (tool_choice := request.get("tool_choice")) is not None:
            body["tool_choice"] = tool_choice
        if params := request.get("params"):
            body.update(params)
        body["stream"] = stream
        if stream and self.settings.include_usage:
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(
        self,
        messages: Messages,
        *,
        stream: bool | None = None,
        on_event: EventCallback | None = None,
        cancel: asyncio.Event | None = None,
        **request: Unpack[RequestArgs],
    ) -> ModelResponse:
        """One call; streaming by default (``settings.stream``). ``on_event`` sees deltas."""
        raise_if_cancelled(cancel)  # before the call's coroutines exist
        use_stream = self.settings.stream if stream is None else stream
        if use_stream:
            call = self._complete_streaming(messages, on_event, request)
        else:
            call = self._complete_plain(messages, request)
        return await race_cancel(self._within_deadline(call, request.get("model")), cancel)

    async def _within_deadline(
        self, call: Coroutine[Any, Any, ModelResponse], model: str | None
    ) -> ModelResponse:
        """``call``, stopped at ``settings.deadline_s`` (the read timeout only bounds the
        silence between bytes: a keep-alive every second never trips it)."""
        deadline = self.settings.deadline_s
        try:
            async with asyncio.timeout(deadline):
                return await call
        except TimeoutError:
            raise ModelCallError(
                ErrorKind.TIMEOUT,
                f"timed out: no complete reply within the {deadline:g} s deadline per call",
                detail="deadline",
                model=model or self.settings.model,
            ) from None

    async def _complete_streaming(
        self, messages: Messages, on_event: EventCallback | None, request: RequestArgs
    ) -> ModelResponse:
        events_on = on_event is not None
        stream = self.stream(messages, events=events_on, **request)
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                if isinstance(event, StreamDone):
                    return event.response
                if on_event is not None:
                    on_event(event)
        raise AssertionError("stream() always ends with StreamDone or raises")

    async def _complete_plain(self, messages: Messages, request: RequestArgs) -> ModelResponse:
        body = self.build_body(messages, stream=False, **request)
        model = str(body["model"])
        started = time.perf_counter()
        try:
            resp = await self._http.post(
                self.settings.chat_url, json=body, headers=self._per_request
            )
            if resp.status_code >= 400:
                raise self._http_error(resp.status_code, resp.text, resp.headers, model)
            data = _decode_json(resp.content, model)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, model) from None
        latency = (time.perf_counter() - started) * 1000
        if isinstance(data, dict) and "error" in data and "choices" not in data:
            raise self._http_error(resp.status_code, resp.text, resp.headers, model)
        return parse_completion(data, model, latency)

    async def stream(
        self, messages: Messages, *, events: bool = True, **request: Unpack[RequestArgs]
    ) -> AsyncGenerator[StreamEvent, None]:
        """One streamed call as events; the last one is ``StreamDone(response)``.
        ``events=False``: only that last one (no event object per chunk)."""
        body = self.build_body(messages, stream=True, **request)
        model_name = str(body["model"])
        started = time.perf_counter()
        asm = StreamAssembler(model_name, events)
        try:
            async with self._http.stream(
                "POST", self.settings.chat_url, json=body, headers=self._per_request
            ) as resp:
                if resp.status_code >= 400:
                    text = (await resp.aread()).decode("utf-8", "replace")
                    raise self._http_error(resp.status_code, text, resp.headers, model_name)
                if "text/event-stream" not in resp.headers.get("content-type", ""):
                    data = _decode_json(await resp.aread(), model_name)
                    latency = (time.perf_counter() - started) * 1000
                    yield StreamDone(parse_completion(data, model_name, latency))
                    return
                decoder = SseDecoder()
                async for line in resp.aiter_lines():
                    sse = decoder.feed_line(line)
                    if sse is not None and not asm.saw_done:
                        for event in self._chunk_events(sse.data, sse.event, asm):
                            yield event
                tail = decoder.close()
                if tail is not None and not asm.saw_done:
                    for event in self._chunk_events(tail.data, tail.event, asm):
                        yield event
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, model_name) from None
        latency = (time.perf_counter() - started) * 1000
        yield StreamDone(asm.finish(latency, started))

    def _chunk_events(
        self, data: str, event_name: str | None, asm: StreamAssembler
    ) -> list[StreamEvent]:
        if data[:1] != "{" and data.strip() == "[DONE]":
            asm.saw_done = True
            return []
        try:
            chunk = _loads(data)
        except json.JSONDecodeError:
            raise ModelCallError(
                ErrorKind.MODEL_ERROR,
                f"SSE data is not JSON: {self._redact(data[:80])!r}",
                detail="malformed_stream",
                model=asm.requested_model,
            ) from None
        if not isinstance(chunk, dict):
            raise ModelCallError(
                ErrorKind.MODEL_ERROR,
                "SSE data is not a JSON object",
                detail="malformed_stream",
                model=asm.requested_model,
            )
        if "error" in chunk or event_name == "error":
            raise self._http_error(None, data, {}, asm.requested_model)
        return asm.add(chunk, time.perf_counter())

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream"}
        if self.settings.api_key:
            headers["Authorization"] = "Bearer " + self.settings.api_key.reveal()
        return headers

    def _redact(self, text: str) -> str:
        return redact(text, [self.settings.api_key])

    def _http_error(
        self, status: int | None, text: str, headers: Mapping[str, str], model: str
    ) -> ModelCallError:
        message, err_type = _error_message(text)
        message = self._redact(message)
        kind = classify(status, f"{err_type} {message}")
        return ModelCallError(
            kind, message, status=status, retry_after=retry_after_seconds(headers), model=model
        )

    def _transport_error(self, exc: httpx.HTTPError, model: str) -> ModelCallError:
        text = self._redact(str(exc) or type(exc).__name__)
        if isinstance(exc, httpx.TimeoutException):
            return ModelCallError(
                ErrorKind.TIMEOUT, f"timed out: {text}", detail="timeout", model=model
            )
        if isinstance(exc, httpx.ConnectError):
            return ModelCallError(
                ErrorKind.MODEL_ERROR,
                f"cannot connect: {text}",
                detail="connect_failed",
                model=model,
            )
        return ModelCallError(
            ErrorKind.MODEL_ERROR,
            f"connection broke before the message was complete: {text}",
            detail="stream_cut",
            model=model,
        )


def _loads(data: str) -> Any:
    """``json.loads`` of one chunk, by orjson (a third of the cost) unless it refuses what
    ``json`` reads (NaN, infinities). orjson reads integers beyond 64 bits as floats; no
    field of a chat-completion chunk holds one."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def _decode_json(raw: bytes, model: str) -> Any:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ModelCallError(
            ErrorKind.MODEL_ERROR,
            f"response body is not JSON ({len(raw)} bytes)",
            detail="bad_response",
            model=model,
        ) from None


def _error_message(text: str) -> tuple[str, str]:
    """The provider's error message and type from an error body (any common shape)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text.strip()[:500] or "(empty error body)", ""
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        message = err.get("message") or data.get("message") or json.dumps(err)[:500]
        etype = " ".join(str(err.get(k) or "") for k in ("type", "code"))
        return str(message)[:500], etype
    return str(err)[:500], ""
