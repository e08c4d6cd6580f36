"""Overhead of ``ctxlens proxy``: added latency per streamed chunk and the wall time of a
100-chunk stream, through the proxy vs straight to the same upstream, side by side.

The upstream (``tests/servers/fake_upstream.py``) runs on a thread of this process and
notes when it wrote each event; it sends event i at i + 1 paces after the request on its
own clock, as a provider generates tokens whatever the client's machine is doing (paced
by "sleep after each write", the proxy's CPU on this 2-core machine stretched the
upstream's own pacing: docs/decisions.md, "Proxy wall time: the upstream's clock"). The
proxy is the real CLI process recording into a real store; the client (httpx, this
process's main thread) notes when each event arrived. Runs alternate direct/relay/proxied
so all see the same machine load. A chunk's latency is arrival minus send (one clock:
``perf_counter`` is system-wide monotonic on Linux); the figure is the proxied p99 minus
the direct p99. Wall time: medians of each side (goal: ≤ 3 % more), and the wall time
beyond the upstream's own send span. The control: a bare asyncio byte relay
(``bench/byte_relay.py``), what one more loopback hop costs here before any proxying.
CPU: the whole proxy process per chunk relayed (the relay plus each call's two store
writes, spread over its 100 chunks), and the event-loop thread alone (the relay).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench import figure
from tests.helpers.proxy_process import ProxyProcess
from tests.servers.fake_upstream import FakeUpstream, Reply

ROOT = Path(__file__).resolve().parents[1]
CHUNKS = 100
PACE_S = 0.004


def _stream(http: httpx.Client, base: str, up: FakeUpstream) -> tuple[float, float, list[float]]:
    """One 100-chunk stream: its wall time, the upstream's own send span (ms) and each
    event's latency (ms)."""
    up.replies.append(Reply("x" * (CHUNKS - 3), fault="pace", pace_s=PACE_S, text_chunk=1))
    body = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}
    arrivals: list[float] = []
    start = time.perf_counter()
    with http.stream("POST", base + "/v1/chat/completions", content=json.dumps(body)) as resp:
        for data in resp.iter_raw():
            now = time.perf_counter()
            arrivals.extend([now] * data.count(b"\n\n"))
    wall = (time.perf_counter() - start) * 1000
    sent = up.requests[-1].sent_at
    return wall, (sent[-1] - sent[0]) * 1000, [(a - s) * 1000 for a, s in zip(arrivals, sent)]


def _byte_relay(port: int) -> subprocess.Popen[str]:
    """``bench/byte_relay.py`` to the upstream's port, in its own process as the proxy is;
    its first line of output is its own port."""
    return subprocess.Popen(
        [sys.executable, "-m", "bench.byte_relay", "127.0.0.1", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def _cpu_s(pid: int) -> float | None:
    """CPU time (user + system) of a process so far, from /proc (Linux), else ``None``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _loop_cpu_s(pid: int) -> float | None:
    """CPU time of the proxy's event-loop thread (the CLI's main thread: the relay alone,
    not the store thread) from its scheduler statistics (ns, not clock ticks)."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def _p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def run(quick: bool = False) -> Iterator[dict[str, Any]]:
    rounds = 6 if quick else 40
    sides = ("direct", "relay", "proxy")
    walls: dict[str, list[float]] = {side: [] for side in sides}
    beyond: dict[str, list[float]] = {side: [] for side in sides}
    lat: dict[str, list[float]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp, FakeUpstream() as up:
        proxy = ProxyProcess(Path(tmp) / "bench.db", up.url)
        relay = _byte_relay(up.port)
        try:
            assert relay.stdout is not None
            urls = {
                "direct": up.url,
                "relay": f"http://127.0.0.1:{int(relay.stdout.readline())}",
                "proxy": proxy.url,
            }
            with httpx.Client(timeout=30, headers={"content-type": "application/json"}) as http:
                for side in sides:  # warm every path (imports, connections)
                    _stream(http, urls[side], up)
                cpu_before = _cpu_s(proxy.proc.pid)
                loop_before = _loop_cpu_s(proxy.proc.pid)
                for _ in range(rounds):
                    for side in sides:
                        wall, span, per_chunk = _stream(http, urls[side], up)
                        walls[side].append(wall)
                        beyond[side].append(wall - span)
                        lat[side].extend(per_chunk)
                cpu_after = _cpu_s(proxy.proc.pid)
                loop_after = _loop_cpu_s(proxy.proc.pid)
        finally:
            relay.kill()
            relay.wait()
            proxy.stop()
    direct_p99, proxy_p99 = _p99(lat["direct"]), _p99(lat["proxy"])
    added = proxy_p99 - direct_p99
    yield figure(
        "proxy", "chunk_added_latency_p99_ms", added, "ms", "<= 1 ms", direct_p99, met=added <= 1.0
    )
    direct, proxied = statistics.median(walls["direct"]), statistics.median(walls["proxy"])
    yield figure(
        "proxy",
        "stream_100_chunks_wall_ms",
        proxied,
        "ms",
        "ratio <= 1.03",
        direct,
        met=proxied <= direct * 1.03,
    )
    bare = statistics.median(walls["relay"])
    yield figure(
        "proxy",
        "stream_100_chunks_bare_relay_wall_ms",
        bare,
        "ms",
        "informational (the floor: one more loopback hop, no proxying; the proxy is judged)",
        direct,
    )
    # The upstream's timer wakes late under load; wall time beyond the upstream's own send
    # span is what the path adds, without that jitter.
    extra = statistics.median(beyond["proxy"]) - statistics.median(beyond["direct"])
    yield figure(
        "proxy",
        "stream_100_chunks_added_ms",
        extra,
        "ms",
        "informational (p99 and the ratio are judged)",
        statistics.median(beyond["direct"]),
        ratio=extra / direct,
    )
    if cpu_before is not None and cpu_after is not None:
        # The proxy's own work (relay, assembly, both store writes) per chunk relayed: CPU
        # time does not grow with the machine's load the way waiting for a time slice does.
        per_chunk_us = (cpu_after - cpu_before) * 1e6 / (rounds * CHUNKS)
        yield figure("proxy", "proxy_cpu_us_per_chunk", per_chunk_us, "us", "informational")
    if loop_before is not None and loop_after is not None:
        # The relay's part of it: the event-loop thread only (the store thread records).
        relay_us = (loop_after - loop_before) * 1e6 / (rounds * CHUNKS)
        yield figure("proxy", "proxy_relay_cpu_us_per_chunk", relay_us, "us", "informational")
