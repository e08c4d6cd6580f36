"""Model client overhead per call against the local server, vs a raw httpx baseline.

Both sides talk to the same ``ModelServer`` in the same run, alternating call by call. The
server runs in its own thread, so the client's CPU time per call (``time.thread_time`` of
the calling thread) is measured apart from the server's work and from waiting; that is the
figure that counts. Wall time per call is reported too (it includes the server). The raw
baseline does the least a correct consumer must: POST, read, ``json.loads`` (per SSE data
line when streaming) and join the text.

Garbage is collected by the call that made it: automatic collection is off while the
calls are timed, and each call ends with a young-generation collection inside its own
timing (``gc.collect(0)``; a full one every ``FULL_GC_EVERY`` rounds, untimed). Left to
the collector, a collection ran in whichever call crossed its threshold: httpx leaves
every response in a reference cycle, so a client that allocated more per call paid for
the baseline's cycles too (ours: +0.19 ms a plain call with automatic collection, +0.07
with collection off; the same objects, only billed to the other side).
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from collections.abc import Iterator
from typing import Any

import httpx

from bench import figure
from core.llm import BackendReply, ChatClient, ChatRequest, ModelServer
from core.llm.wire import stream_chunks
from core.records import ToolCall

REPLY = BackendReply(
    text="The top risk entities are ranked by weighted event density. " * 16,
    tool_calls=(
        ToolCall("call_1", "fetch_window", json.dumps({"id": "win-1001", "pad": "x" * 200})),
        ToolCall("call_2", "fetch_window", json.dumps({"id": "win-1002", "pad": "y" * 200})),
    ),
)
MESSAGES = [
    {"role": "system", "content": "You are a risk analyst."},
    {"role": "user", "content": "Rank the entities. " * 50},
]


#: Rounds (one call of each kind) between two untimed full collections.
FULL_GC_EVERY = 20


class _Fixed:
    def reply(self, request: ChatRequest) -> BackendReply:
        return REPLY


async def _raw_plain(http: httpx.AsyncClient, url: str) -> str:
    body = {"model": "m", "messages": MESSAGES, "stream": False}
    resp = await http.post(url, json=body)
    data = resp.json()
    return str(data["choices"][0]["message"]["content"])


async def _raw_stream(http: httpx.AsyncClient, url: str) -> str:
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    parts: list[str] = []
    async with http.stream("POST", url, json=body) as resp:
        async for line in resp.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                for choice in json.loads(line[6:])["choices"]:
                    parts.append(choice["delta"].get("content") or "")
    return "".join(parts)


async def _measure(
    server: ModelServer, calls: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    names = ("plain", "raw_plain", "stream", "raw_stream")
    wall: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    url = server.url + "/chat/completions"
    async with httpx.AsyncClient() as http, ChatClient(server.settings("m")) as client:
        runs: dict[str, Any] = {
            "plain": lambda: client.complete(MESSAGES, stream=False),
            "raw_plain": lambda: _raw_plain(http, url),
            "stream": lambda: client.complete(MESSAGES, stream=True),
            "raw_stream": lambda: _raw_stream(http, url),
        }
        for fn in runs.values():  # warm up connections, tiktoken, caches
            await fn()
        gc.disable()
        try:
            for n in range(calls):
                for name, fn in runs.items():
                    t0, c0 = time.perf_counter(), time.thread_time()
                    await fn()
                    gc.collect(0)
                    cpu[name].append((time.thread_time() - c0) * 1000)
                    wall[name].append((time.perf_counter() - t0) * 1000)
                if n % FULL_GC_EVERY == FULL_GC_EVERY - 1:
                    gc.collect()
        finally:
            gc.enable()
    return wall, cpu


def run(quick: bool = False) -> Iterator[dict[str, Any]]:
    calls = 40 if quick else 300
    with ModelServer(_Fixed(), text_chunk=24, args_chunk=16) as server:
        wall, cpu = asyncio.run(_measure(server, calls))
    chunks = len(stream_chunks(REPLY, "m", "id", 0, None, 24, 16)) + 1  # + [DONE]
    for mode in ("plain", "stream"):
        ours, raw = statistics.mean(cpu[mode]), statistics.mean(cpu[f"raw_{mode}"])
        yield figure("llm", f"client_{mode}_cpu_ms_per_call", ours, "ms", "ratio <= 1.3", raw)
        if mode == "plain":
            yield figure("llm", "client_plain_cpu_overhead_ms", ours - raw, "ms", "<= 0.5 ms")
        else:
            per_chunk = (ours - raw) * 1000 / chunks
            yield figure("llm", "client_stream_cpu_overhead_us_per_chunk", per_chunk, "us", "<= 10")
        ours, raw = statistics.median(wall[mode]), statistics.median(wall[f"raw_{mode}"])
        yield figure(
            "llm",
            f"client_{mode}_wall_ms_per_call",
            ours,
            "ms",
            "informational (the per-chunk figure is judged)",
            raw,
        )
