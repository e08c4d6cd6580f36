"""``ctxlens context``: exactly what the model received at a call (or will receive next)."""

from __future__ import annotations

from typing import Any

from app.cli import CliContext
from core.context.view import call_view, current_view, request_sha256, token_breakdown
from core.inspect.budget import budget_of
from core.inspect.recorded import recorded_of


def register(sub: Any) -> None:
    p = sub.add_parser("context", help="the message list the model received at a call")
    p.add_argument("trace", metavar="TRACE")
    p.add_argument(
        "--call",
        type=int,
        default=None,
        metavar="N",
        help="LLM call index (default: what the next call would receive)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=run)


def run(ctx: CliContext) -> int:
    with ctx.store().read() as r:
        tr = r.find_trace(ctx.args.trace)
        budget = budget_of(tr.source, tr.metadata)
        call = None
        if ctx.args.call is None:
            view = current_view(r, tr.id)
            recorded = None
        else:
            call = r.llm_call(tr.id, ctx.args.call)
            view = call_view(r, call)
            recorded = call.request_sha256
        messages = view.openai()
        total, by = token_breakdown(view)
        digest = request_sha256(messages)
    usage = recorded_of(call.usage) if call is not None else None
    result = {
        "call": ctx.args.call,
        "messages": messages,
        "tokens": {"total": total, "by_component": by},
        "request_sha256": digest,
        "recorded_sha256": recorded,
        "window": {"tokens": budget.window, "source": budget.window_source},
        "recorded": usage.to_json() if usage is not None else None,
        "reconstructed_tokens": total,
        "unexplained_tokens": usage.unexplained(total) if usage is not None else None,
        "context": _context_kind(call),
        "limits": {name: value for name, value in budget.markers()},
    }
    if ctx.args.json:
        ctx.emit_json(result)
    else:
        for m in messages:
            content = m.get("content")
            text = content if isinstance(content, str) else str(content)
            ctx.out.write(f"[{m['role']}] {text[:200]}\n")
        ctx.out.write(f"-- {len(messages)} messages, {total} tokens, sha256 {digest[:12]}\n")
        if usage is not None and usage.prompt_tokens is not None:
            ctx.out.write(
                f"-- recorded prompt {usage.prompt_tokens} tokens; "
                f"{usage.prompt_tokens - total} not in the transcript\n"
            )
    return 0


def _context_kind(call: Any) -> str:
    """``recorded`` (the exact list sent), ``reconstructed`` (rebuilt from the transcript),
    or ``next`` (what the next call would receive)."""
    if call is None:
        return "next"
    params = call.params if isinstance(call.params, dict) else {}
    return "reconstructed" if params.get("context") == "reconstructed" else "recorded"
