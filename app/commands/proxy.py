"""``ctxlens proxy``: record an agent's model calls by standing in for its provider."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from app.cli import CliContext
from core.errors import InvalidInputError

HELP = "record every model call an agent makes (point its base URL here)"
DESCRIPTION = """An HTTP proxy for OpenAI Chat Completions, OpenAI Responses and Anthropic
Messages: each call is recorded into the store as it streams."""


#: Longest ``--timeout`` (a day): a larger wait overflows the platform's timeout.
MAX_TIMEOUT = 86_400.0


def arguments(p: ArgumentParser) -> None:
    p.add_argument("--upstream", required=True, metavar="URL", help="the provider's base URL")
    p.add_argument("--listen", default="127.0.0.1:8787", metavar="HOST:PORT")
    p.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds to wait for the upstream (connect, and between two chunks)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")


def run(ctx: CliContext) -> int:
    from core.proxy.server import ProxyServer

    host, port = _listen(ctx.args.listen)
    if not 0 < ctx.args.timeout <= MAX_TIMEOUT:  # NaN too: every call timed out "within nan s"
        raise InvalidInputError(
            f"--timeout {ctx.args.timeout:g}: expected seconds above 0, up to {MAX_TIMEOUT:g}"
        )
    store = ctx.store(create=True)
    _sparse_checkpoints(store)
    server = ProxyServer(
        store,
        ctx.args.upstream,
        host,
        port,
        ctx.args.timeout,
        on_call=lambda event: _say(ctx, event),
    )
    import asyncio

    asyncio.run(_serve(ctx, server))
    _say(ctx, {"event": "stopped", **server.status.to_json()})
    return 0


async def _serve(ctx: CliContext, server: Any) -> None:
    import asyncio
    import signal

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, server.request_stop)

    def ready(s: Any) -> None:
        _quiet_runtime()
        _say(ctx, {"event": "listening", **s.status.to_json()})

    try:
        await server.serve(ready)
    except OSError as exc:
        raise InvalidInputError(f"--listen {ctx.args.listen}: {exc.strerror or exc}") from None


#: Seconds between two WAL checkpoints of the proxy's store at most.
PROXY_CHECKPOINT_S = 10.0


def _sparse_checkpoints(store: Any) -> None:
    """Checkpoint the WAL every ``PROXY_CHECKPOINT_S`` at most, not after every write.

    The first write after a complete checkpoint starts the WAL over, and SQLite syncs its
    header then (``synchronous=NORMAL``): an fsync, 2 ms on a quiet disk and tens of ms on a
    busy one. The proxy writes twice per call, so with the store's 0.2 s interval nearly
    every call's request row (which commits before a byte goes upstream) paid that sync on
    the agent's time. Ten seconds of a proxy's writes keep the WAL small."""
    if store.checkpointer is not None:
        store.checkpointer.interval = PROXY_CHECKPOINT_S


def _quiet_runtime() -> None:
    """This process only relays and records: what start-up loaded (SQLAlchemy, httpx, the
    schema) is frozen out of the collector, so no full collection walks it between two
    chunks; and the event loop waits at most 1 ms, not 5, for the interpreter lock while
    the store thread records another call."""
    import gc
    import sys

    gc.collect()
    gc.freeze()
    sys.setswitchinterval(0.001)


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise InvalidInputError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8787")
    return host.strip("[]") or "127.0.0.1", int(port)


def _say(ctx: CliContext, event: dict[str, Any]) -> None:
    if ctx.args.json:
        ctx.out.write(json.dumps(event, ensure_ascii=False) + "\n")
    else:
        ctx.out.write(_line(event) + "\n")
    ctx.out.flush()


def _line(e: dict[str, Any]) -> str:
    if e["event"] == "listening":
        note = (
            f" ({e['recovered_incomplete']} cut-off requests marked incomplete)"
            if e["recovered_incomplete"]
            else ""
        )
        return f"ctxlens proxy on http://{e['address']} -> {e['upstream']}{note}"
    if e["event"] == "call":
        err = f" - {e['error']}" if e["error"] else ""
        return (
            f"{e['trace']} call {e['call']}: {e['api']} {e['model']} "
            f"{e['status']} {e['outcome']}{err}"
        )
    return f"proxy stopped: {e['calls']} calls, {e['traces_seen']} traces, {e['errors']} errors"
