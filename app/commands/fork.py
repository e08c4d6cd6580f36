"""``ctxlens fork``: edit one message of a trace and continue into a new trace
(``core/replay/fork.py``). JSON: the re-run summary (``ctxlens replay --json``'s keys) plus
``forked_at``, ``edited`` {sequence, role, tokens_before, tokens_after} and, with
``--compare``, ``comparison``."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from app.cli import CliContext
from core.errors import CtxlensError

HELP = "edit a message and continue into a new trace"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--at", type=int, required=True, metavar="SEQ", help="the message to edit")
    p.add_argument(
        "--content-file", required=True, metavar="FILE", help="the message's new content"
    )
    p.add_argument(
        "--model",
        choices=("auto", "scripted", "endpoint", "stop"),
        default="auto",
        help="after the edit changes the context: the demo's scripted model (scripted), the "
        "configured endpoint (endpoint: CTXLENS_BASE_URL, CTXLENS_MODEL, the key from "
        "CTXLENS_API_KEY), or stop (auto: scripted for demo traces, stop otherwise)",
    )
    p.add_argument("--compare", action="store_true", help="add a comparison with the source")
    p.add_argument("--json", action="store_true")


def _content(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CtxlensError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CtxlensError(f"{path}: cannot read the new content ({exc})") from None


def _endpoint(metadata: Any) -> Any:
    from core.llm.settings import ENV_BASE_URL, ENV_MODEL
    from core.replay.endpoint import configured_endpoint

    endpoint = configured_endpoint(metadata)
    if endpoint is None:
        raise CtxlensError(
            f"--model endpoint: no model endpoint configured: set {ENV_BASE_URL} and "
            f"{ENV_MODEL} (the key in CTXLENS_API_KEY)"
        )
    return endpoint


def run(ctx: CliContext) -> int:
    from app.commands.replay import emit_rerun
    from core.replay.fork import fork_options
    from core.replay.rerun import replay

    a = ctx.args
    content = _content(a.content_file)
    store = ctx.store()
    mode = {"auto": "auto", "scripted": "live", "endpoint": "live", "stop": "stop"}[a.model]
    with store.read() as r:
        source = r.find_trace(a.trace)
        before = r.message(source.id, a.at) if a.at >= 0 else None
    endpoint = _endpoint(source.metadata) if a.model == "endpoint" else None
    opts = fork_options(store, a.trace, a.at, content, on_diverge=mode, endpoint=endpoint)  # type: ignore[arg-type]
    result = replay(store, *opts)
    with store.read() as r:
        after = r.message(result.trace_id, a.at)
    out = result.to_json()
    out["forked_at"] = a.at
    out["edited"] = {
        "sequence": a.at,
        "role": after.role,
        "tokens_before": before.token_count if before else None,
        "tokens_after": after.token_count,
    }
    return emit_rerun(
        ctx,
        store,
        result,
        out,
        lambda out, where: (
            f"trace {out['trace_id']}: fork of {out['source_trace']} at #{a.at} "
            f"(call {out['from_call']}), {out['calls']} model calls, {where}"
        ),
    )
