"""``ctxlens serve --otlp``: receive OpenTelemetry traces over OTLP/HTTP into the store."""

from __future__ import annotations

import json
import threading
from typing import Any

from app.cli import CliContext

DEFAULT = "127.0.0.1:4318"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="receive live traces (OTLP/HTTP on 127.0.0.1:4318)",
        description="Run a receiver until interrupted. --otlp [HOST:PORT] takes OTLP/HTTP "
        "trace exports (POST /v1/traces, protobuf or JSON, gzip) from any OpenTelemetry "
        "exporter; GenAI and OpenInference spans become messages and model calls. Listens "
        "on loopback unless another host is given; port 0 picks a free port.",
    )
    p.add_argument("--otlp", nargs="?", const=DEFAULT, metavar="HOST:PORT", required=True)
    p.add_argument("--max-bytes", type=int, default=32 << 20, help="largest accepted body")
    p.add_argument("--json", action="store_true", help="one JSON object per event, per line")
    p.set_defaults(handler=run)


def run(ctx: CliContext) -> int:
    from core.live.otlp_server import OtlpReceiver, parse_address

    host, port = parse_address(ctx.args.otlp)
    store = ctx.store(create=True)

    def say(obj: dict[str, Any], text: str) -> None:
        ctx.out.write((json.dumps(obj) if ctx.args.json else text) + "\n")
        ctx.out.flush()

    def report(change: Any) -> None:
        verb = "new trace" if change.new_trace else "appended to"
        say(change.to_json(), f"otlp: {verb} {change.trace_id} (+{change.messages})")

    receiver = OtlpReceiver(store, host, port, listener=report, max_bytes=ctx.args.max_bytes)
    receiver.start()
    say(
        {"event": "listening", "source": "otlp", "address": receiver.address},
        f"OTLP/HTTP receiver on {receiver.address} (Ctrl-C stops)",
    )
    try:
        threading.Event().wait()
    finally:
        receiver.stop()
    return 0
