"""A loopback fake of three provider APIs for the proxy tests and bench.

OpenAI Chat Completions (through the runtime's own wire helpers, ``core/llm/wire.py``),
OpenAI Responses and Anthropic Messages, streamed (SSE) and plain, with text and tool
calls. Replies are queued on ``replies`` (default: "ok"); a reply's ``fault`` makes the
server answer 500, stall before its headers or mid-stream, or pace its chunks. Every request
is kept (``requests``: path, headers, body bytes) with the send time of each chunk.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from core.llm.backend import BackendReply
from core.llm.wire import completion_body, pieces, stream_chunks
from core.proxy.http import LAST_CHUNK, chunk, head_bytes, read_request
from core.records import ToolCall


@dataclass
class Reply:
    text: str = "ok"
    tool_calls: tuple[ToolCall, ...] = ()
    fault: str | None = None
    """None | "500" | "stall_head" | "stall_mid" | "pace" """
    pace_s: float = 0.0
    text_chunk: int = 4


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes
    sent_at: list[float] = field(default_factory=list)


USAGE = {"in": 11, "out": 7}


class FakeUpstream:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeUpstream:
        ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main(ready)), daemon=True)
        self._thread.start()
        assert ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        assert self._thread is not None
        self._thread.join(10)

    async def _main(self, ready: threading.Event) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._conn, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        ready.set()
        await self._stop.wait()
        server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while (req := await read_request(reader)) is not None:
                seen = Seen(req.path, {k.lower(): v for k, v in req.headers}, req.body)
                self.requests.append(seen)
                if req.method != "POST":  # GET /v1/models, a HEAD probe: not model calls
                    data = json.dumps({"object": "list", "data": [{"id": "m"}]}).encode()
                    head = [
                        ("content-type", "application/json"),
                        ("content-length", str(len(data))),
                    ]
                    body = b"" if req.method == "HEAD" else data
                    writer.write(head_bytes(200, "", head) + body)
                    continue
                reply = self.replies.popleft() if self.replies else Reply()
                await self._answer(seen, json.loads(req.body), reply, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _answer(
        self, seen: Seen, body: dict[str, Any], reply: Reply, writer: asyncio.StreamWriter
    ) -> None:
        family = _family(seen.path)
        if reply.fault == "500":  # echoes the credential, as the worst provider would
            echo = seen.headers.get("authorization") or seen.headers.get("x-api-key") or ""
            data = json.dumps(_error_body(family, echo)).encode()
            head = [("content-type", "application/json"), ("content-length", str(len(data)))]
            writer.write(head_bytes(500, "", head) + data)
            await writer.drain()
            return
        if reply.fault == "stall_head":
            await asyncio.sleep(3600)
        model = str(body.get("model", "m"))
        if not body.get("stream"):
            data = json.dumps(_plain(family, model, reply)).encode()
            head = [("content-type", "application/json"), ("content-length", str(len(data)))]
            writer.write(head_bytes(200, "", head) + data)
            await writer.drain()
            return
        head = [("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]
        writer.write(head_bytes(200, "", head))
        events = _events(family, model, reply, body)
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i, event in enumerate(events):
            if reply.fault == "stall_mid" and i == 2:
                await writer.drain()
                await asyncio.sleep(3600)
            if reply.pace_s:  # event i is due at start + (i + 1) * pace, on its own clock
                await asyncio.sleep(max(0.0, start + (i + 1) * reply.pace_s - loop.time()))
            writer.write(chunk(event.encode()))
            seen.sent_at.append(time.perf_counter())
            await writer.drain()
        writer.write(LAST_CHUNK)
        await writer.drain()


def _family(path: str) -> str:
    if path.endswith("/chat/completions"):
        return "chat"
    return "responses" if path.endswith("/responses") else "anthropic"


def _error_body(family: str, echo: str) -> dict[str, Any]:
    message = f"upstream broke (you sent {echo})"
    if family == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


def _plain(family: str, model: str, r: Reply) -> dict[str, Any]:
    if family == "chat":
        usage = {
            "prompt_tokens": USAGE["in"],
            "completion_tokens": USAGE["out"],
            "total_tokens": USAGE["in"] + USAGE["out"],
        }
        return completion_body(BackendReply(r.text, r.tool_calls), model, "chatcmpl-1", 1, usage)
    if family == "responses":
        return _response(model, r)
    return _anthropic_message(model, r, _anthropic_blocks(r))


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    name = f"event: {event}\n" if event else ""
    return f"{name}data: {json.dumps(data)}\n\n"


def _events(family: str, model: str, r: Reply, body: dict[str, Any]) -> list[str]:
    if family == "chat":
        usage = {
            "prompt_tokens": USAGE["in"],
            "completion_tokens": USAGE["out"],
            "total_tokens": USAGE["in"] + USAGE["out"],
        }
        chunks = stream_chunks(
            BackendReply(r.text, r.tool_calls), model, "chatcmpl-1", 1, usage, r.text_chunk, 8
        )
        return [_sse(c) for c in chunks] + ["data: [DONE]\n\n"]
    if family == "responses":
        return _responses_events(model, r)
    return _anthropic_events(model, r)


# -- Responses ---------------------------------------------------------------------------


def _response_items(r: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if r.text:
        items.append(
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text, "annotations": []}],
            }
        )
    for i, c in enumerate(r.tool_calls):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{i}",
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments,
                "status": "completed",
            }
        )
    return items


def _response(model: str, r: Reply, status: str = "completed", done: bool = True) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": model,
        "output": _response_items(r) if done else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": USAGE["in"],
            "output_tokens": USAGE["out"],
            "total_tokens": USAGE["in"] + USAGE["out"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _responses_events(model: str, r: Reply) -> list[str]:
    seq = iter(range(10_000))

    def ev(kind: str, **data: Any) -> str:
        return _sse({"type": kind, "sequence_number": next(seq), **data}, kind)

    out = [ev("response.created", response=_response(model, r, "in_progress", False))]
    for index, item in enumerate(_response_items(r)):
        if item["type"] == "message":
            empty = {**item, "status": "in_progress", "content": []}
            out.append(ev("response.output_item.added", output_index=index, item=empty))
            part = {"type": "output_text", "text": "", "annotations": []}
            out.append(
                ev(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=part,
                )
            )
            for piece in pieces(r.text, r.text_chunk):
                out.append(
                    ev(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=piece,
                        logprobs=[],
                    )
                )
        else:
            out.append(
                ev("response.output_item.added", output_index=index, item={**item, "arguments": ""})
            )
            for piece in pieces(item["arguments"], 8):
                out.append(
                    ev(
                        "response.function_call_arguments.delta",
                        item_id=item["id"],
                        output_index=index,
                        delta=piece,
                    )
                )
        out.append(ev("response.output_item.done", output_index=index, item=item))
    out.append(ev("response.completed", response=_response(model, r)))
    return out


# -- Anthropic ---------------------------------------------------------------------------


def _anthropic_blocks(r: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": r.text}] if r.text else []
    for c in r.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.arguments)}
        )
    return blocks


def _anthropic_message(model: str, r: Reply, content: list[Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if r.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE["in"], "output_tokens": USAGE["out"]},
    }


def _anthropic_events(model: str, r: Reply) -> list[str]:
    start = _anthropic_message(model, r, [])
    start["stop_reason"] = None
    start["usage"] = {"input_tokens": USAGE["in"], "output_tokens": 1}
    out = [_sse({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(_anthropic_blocks(r)):
        empty = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
        out.append(
            _sse(
                {"type": "content_block_start", "index": index, "content_block": empty},
                "content_block_start",
            )
        )
        if block["type"] == "text":
            deltas = [{"type": "text_delta", "text": p} for p in pieces(r.text, r.text_chunk)]
        else:
            args = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(args, 8)]
        for delta in deltas:
            out.append(
                _sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            )
        out.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop = "tool_use" if r.tool_calls else "end_turn"
    out.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": USAGE["out"]},
            },
            "message_delta",
        )
    )
    out.append(_sse({"type": "message_stop"}, "message_stop"))
    return out
