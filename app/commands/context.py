"""``ctxlens context``: exactly what the model received at a call (or will receive next)."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import TYPE_CHECKING, Any

from app.cli import CliContext
from app.commands.pricing import add_price_options, price_table

if TYPE_CHECKING:
    from core.context.budget import Budget

HELP = "the message list the model received at a call"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument(
        "--call",
        type=int,
        default=None,
        metavar="N",
        help="LLM call index (default: what the next call would receive)",
    )
    p.add_argument("--json", action="store_true")
    add_price_options(p)


def run(ctx: CliContext) -> int:
    from core.context.budget import budget_of
    from core.context.view import call_view, current_view, request_sha256, token_breakdown
    from core.cost.stored import one_call_cost, trace_cost
    from core.importers.usage import OPEN_AT_STOP_WORDS
    from core.inspector.context_report import budget_at, view_images
    from core.inspector.prompt import prompt_measure
    from core.inspector.recorded import gap_context, gap_words, recorded_of
    from core.proxy.query import proxied_request
    from core.replay.context_origin import context_origin

    table = price_table(ctx.args)
    with ctx.store().read() as r:
        tr = r.find_trace(ctx.args.trace)
        budget = budget_of(tr.source, tr.metadata)
        call = None
        if ctx.args.call is None:
            view = current_view(r, tr.id)
            recorded = proxied = None
        else:
            call = r.llm_call(tr.id, ctx.args.call)
            budget = budget_at(r, tr.id, budget, call.head_sequence)
            view = call_view(r, call)
            recorded = call.request_sha256
            proxied = proxied_request(r, tr.id, call.call_index)
        messages = view.openai()
        total, by = token_breakdown(view)
        digest = request_sha256(messages)
        # Through call N (the whole trace without --call); ``call``: call N alone.
        cost = trace_cost(r, tr.id, table, upto_call=ctx.args.call).to_json()
        if ctx.args.call is not None:
            cost["call"] = one_call_cost(r, tr.id, ctx.args.call, table).to_json()
        usage = recorded_of(call.usage) if call is not None else None
        gap = None
        if call is None and budget.source == "imported":
            from core.inspector.context_report import carried_gap

            gap = carried_gap(r, tr.id)
        images = view_images(r, tr.id, view, call, gap)
        # where the call's context comes from, in the words of the panes (None: next call)
        origin = context_origin(tr.source, tr.metadata, call.params) if call else None
    image_tokens = images.estimated_tokens if images is not None else 0
    unexplained = usage.unexplained(total + image_tokens) if usage is not None else None
    where = gap_context(len(view.entries), by, call.params) if call is not None else None
    if gap is not None:
        unexplained = gap.tokens
        where = gap.where()
    # What the part the transcript lacks can be, in words that fit the context it was
    # measured at (no "system prompt" beside a system message, …)
    words = gap_words(unexplained or 0, where, images.unknown if images is not None else 0)
    gap_label = words.text
    # the prompt as the Context and Budget panes measure it (recorded, counted or estimated)
    measure = prompt_measure(
        by,
        image_tokens,
        usage.prompt_tokens if usage is not None else None,
        gap.tokens if gap is not None and usage is None else None,
    )
    prompt = measure.tokens
    result = {
        "call": ctx.args.call,
        "messages": messages,
        "tokens": {"total": total, "by_component": by},
        "request_sha256": digest,
        "recorded_sha256": recorded,
        "cost": cost,
        "window": _window_json(budget),
        "recorded": usage.to_json() if usage is not None else None,
        "reconstructed_tokens": total,
        "unexplained_tokens": unexplained,
        "context": _context_kind(origin),
        "context_origin": origin.to_json() if origin is not None else None,
        "limits": {name: value for name, value in budget.markers()},
        # Each limit against the prompt; an observed one (Claude Code's auto-compact point:
        # the size at which it fired) leaves at most ``left`` (``left_bound: at_most``).
        "limits_detail": [
            limit.to_json() for limit in budget.limits_left(prompt, measure.estimated)
        ],
        # The prompt the window holds: reconstructed + what the transcript lacks (recorded).
        "prompt_tokens": prompt,
        "prompt_basis": measure.basis,
        "prompt_estimated": measure.estimated,
        "free_tokens": None if budget.window is None else max(0, budget.window - prompt),
        "carried_from": gap.to_json() if gap is not None else None,
        # Images have no text to count: their tokens are estimated by the provider's rule.
        "image_tokens_estimated": images.known_tokens if images is not None else None,
        "images": images.to_json() if images is not None else None,
        "components": _components(by, image_tokens, unexplained),
        "not_in_transcript": words.to_json()
        if unexplained is not None and unexplained > 0
        else None,
    }
    if proxied is not None:  # recorded by ``ctxlens proxy``: the body exactly as sent,
        result["proxy_request"] = proxied  # and the recorded hash is of those bytes
        result["request_sha256"] = proxied["computed_sha256"]
    if ctx.args.json:
        ctx.emit_json(result)
    else:
        for m in messages:
            content = m.get("content")
            text = content if isinstance(content, str) else str(content)
            ctx.out.write(f"[{m['role']}] {text[:200]}\n")
        ctx.out.write(f"-- {len(messages)} messages, {total} tokens, sha256 {digest[:12]}\n")
        if origin is not None:
            ctx.out.write(f"-- {origin.text}\n")
        if images is not None:
            ctx.out.write(f"-- {images.text}\n")
        if usage is not None and usage.prompt_tokens is not None and unexplained is not None:
            ctx.out.write(
                f"-- recorded prompt {usage.prompt_tokens} tokens; {unexplained} {gap_label}\n"
            )
        if usage is not None and usage.output_open_at_stop:
            ctx.out.write(
                f"-- recorded output {usage.output_tokens} tokens ({OPEN_AT_STOP_WORDS})\n"
            )
        if gap is not None:
            ctx.out.write(
                f"-- next prompt ~{prompt} tokens: call {gap.call_index} recorded "
                f"{gap.recorded_prompt_tokens}; {gap.tokens} {gap_label}\n"
            )
    return 0


def _context_kind(origin: Any) -> str:
    """``recorded`` (the exact list sent), ``reconstructed`` (rebuilt from the transcript),
    or ``next`` (what the next call would receive): ``context_origin`` says more."""
    if origin is None:
        return "next"
    return "recorded" if origin.recorded else "reconstructed"


def _components(by: dict[str, int], image_tokens: int, unexplained: int | None) -> list[Any]:
    """The prompt's parts in drawing order, each ``{name, tokens, estimated}``: the counted
    components, the images' estimate, and what the transcript lacks (recorded minus the rest)."""
    out: list[Any] = [{"name": c, "tokens": n, "estimated": False} for c, n in by.items()]
    if image_tokens:
        out.append({"name": "images_estimated", "tokens": image_tokens, "estimated": True})
    if unexplained is not None and unexplained > 0:
        out.append({"name": "not_in_transcript", "tokens": unexplained, "estimated": False})
    return out


def _window_json(budget: Budget) -> dict[str, Any]:
    """``window {tokens, source, recorded}``: ``source`` keeps issue 13's four values
    (``trace``, ``model-table``, ``config``, ``unknown``); a ctxlens run's window is its
    config either way, and ``recorded`` says whether the trace recorded that config
    (false: ctxlens's defaults, the Budget pane's "(defaults)")."""
    source = budget.window_source
    out: dict[str, Any] = {
        "tokens": budget.window,
        "source": "config" if source == "defaults" else source,
    }
    if source in ("config", "defaults"):
        out["recorded"] = source == "config"
    return out
