"""``ctxlens serve``: receive OpenTelemetry traces over OTLP/HTTP into the store (``--otlp``),
and/or serve a local OpenAI-compatible model endpoint that fails on purpose (``--model``)."""

from __future__ import annotations

import json
import threading
from argparse import ArgumentParser
from typing import Any

from app.cli import CliContext

DEFAULT = "127.0.0.1:4318"
MODEL_DEFAULT = "127.0.0.1:8765"


HELP = "receive live traces (OTLP/HTTP on 127.0.0.1:4318); serve a fault-injecting model"
DESCRIPTION = """Run until interrupted. --otlp [HOST:PORT] takes OTLP/HTTP trace exports (POST
/v1/traces, protobuf or JSON, gzip) from any OpenTelemetry exporter; GenAI and OpenInference
spans become messages and model calls. --model [HOST:PORT] serves an OpenAI-compatible
/v1/chat/completions (an echo model, streamed or not) that fails as real providers do for the
requests --fault names, to try an agent's retries, fallbacks and timeouts. Listens on loopback
unless another host is given; port 0 picks a free port."""


def arguments(p: ArgumentParser) -> None:
    p.add_argument("--otlp", nargs="?", const=DEFAULT, metavar="HOST:PORT")
    p.add_argument("--model", nargs="?", const=MODEL_DEFAULT, metavar="HOST:PORT")
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME[:ARG,...][*TIMES][@MODEL]",
        help="with --model: fail the next TIMES requests (for MODEL only, if given), in the "
        "order given. Names: " + _fault_help(),
    )
    p.add_argument(
        "--context-window", type=int, metavar="TOKENS", help="with --model: answer 400 above it"
    )
    p.add_argument("--max-bytes", type=int, default=32 << 20, help="largest accepted body")
    p.add_argument("--json", action="store_true", help="one JSON object per event, per line")


def _fault_help() -> str:
    from core.llm.fault_spec import fault_help

    return fault_help()


def run(ctx: CliContext) -> int:
    from core.errors import CtxlensError

    args = ctx.args
    if not args.otlp and not args.model:
        raise CtxlensError("serve: give --otlp [HOST:PORT], --model [HOST:PORT] or both")
    if args.max_bytes < 1:
        raise CtxlensError(f"--max-bytes {args.max_bytes}: expected a size of at least 1 byte")
    if args.fault and not args.model:
        raise CtxlensError("serve: --fault goes with --model")
    lock = threading.Lock()

    def say(obj: dict[str, Any], text: str) -> None:
        with lock:
            ctx.out.write((json.dumps(obj) if args.json else text) + "\n")
            ctx.out.flush()

    stops = [_start_model(args, say)] if args.model else []
    try:
        if args.otlp:
            stops.append(_start_otlp(ctx, say))
        threading.Event().wait()
    finally:
        for stop in reversed(stops):
            stop()
    return 0


def _start_otlp(ctx: CliContext, say: Any) -> Any:
    from core.live.otlp_server import OtlpReceiver, parse_address

    host, port = parse_address(ctx.args.otlp)
    store = ctx.store(create=True)

    def report(change: Any) -> None:
        verb = "new trace" if change.new_trace else "appended to"
        say(change.to_json(), f"otlp: {verb} {change.trace_id} (+{change.messages})")

    receiver = OtlpReceiver(store, host, port, listener=report, max_bytes=ctx.args.max_bytes)
    receiver.start()
    say(
        {"event": "listening", "source": "otlp", "address": receiver.address},
        f"OTLP/HTTP receiver on {receiver.address} (Ctrl-C stops)",
    )
    return receiver.stop


def _start_model(args: Any, say: Any) -> Any:
    from core.live.otlp_server import parse_address
    from core.llm.backend import EchoBackend
    from core.llm.fault_spec import parse_fault
    from core.llm.server import ModelServer, ServedRequest

    queued = [parse_fault(spec) for spec in args.fault]
    host, port = parse_address(args.model)

    def report(req: ServedRequest) -> None:
        row = {
            "event": "request",
            "source": "model",
            "index": req.index,
            "model": req.model,
            "stream": req.stream,
            "status": req.status,
            "fault": req.fault,
        }
        say(
            row,
            f"model: #{req.index} {req.model} -> {req.status}"
            + (f" ({req.fault})" if req.fault else ""),
        )

    server = ModelServer(
        EchoBackend(),
        host=host,
        port=port,
        context_window=args.context_window,
        strict=False,
        on_request=report,
        log_limit=100,
    )
    for q in queued:
        server.faults.add(q.fault, times=q.times, model=q.model)
    server.start()
    address = f"{server.host}:{server.port}"
    say(
        {
            "event": "listening",
            "source": "model",
            "address": address,
            "base_url": server.url,
            "faults": [q.spec for q in queued],
        },
        f"model endpoint on {server.url} ({len(queued)} fault(s) queued; Ctrl-C stops)",
    )
    return server.stop
