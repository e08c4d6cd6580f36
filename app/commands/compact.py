"""``ctxlens compact``: preview (default) or apply one compaction level on a trace (CMP-8).

JSON keys (a contract): level, applied, before {messages, tokens}, after {messages, tokens},
removed, context_after, retention {refs, constraints, completed_steps, skills: {kept, lost}};
also status, reason (words for people), limit_tokens (what ``auto`` measured the context
against when it found no compaction needed, else null), limits.
``summary`` without a configured model uses the scripted summarizer.
"""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.cli import CliContext
from core.errors import InvalidInputError

if TYPE_CHECKING:
    from core.context.compaction import CompactionConfig
    from core.context.compaction.preview import Preview
    from core.inspector.compaction import CompactRequest


class _Choices:
    """A vocabulary of ``core/context/compaction/config.py`` for argparse, read only when
    ``compact`` is parsed or its help shown (the compaction package costs every other
    command its import time)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _values(self) -> tuple[str, ...]:
        from core.context.compaction import config

        return tuple(getattr(config, self.name))

    def __contains__(self, value: object) -> bool:
        return value in self._values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())


HELP = "preview or apply a compaction level on a trace"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE", help="trace id (or a unique prefix)")
    p.add_argument(
        "--level",
        required=True,
        choices=_Choices("ALL_LEVELS"),
        metavar="LEVEL",
        help="%(choices)s",
    )
    p.add_argument("--apply", action="store_true", help="record the compaction (default: dry run)")
    p.add_argument("--window", type=int, default=None, help="context window in tokens")
    p.add_argument(
        "--threshold", type=float, default=None, help="compact above this share of the window"
    )
    p.add_argument(
        "--goal-mode",
        choices=_Choices("GOAL_MODES"),
        default=None,
        metavar="MODE",
        help="%(choices)s",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def config_from(args: Any) -> CompactionConfig:
    from core.context.compaction import CompactionConfig

    if args.window is not None and args.window <= 0:
        raise InvalidInputError(f"--window must be a positive number of tokens, not {args.window}")
    if args.threshold is not None and not 0 < args.threshold <= 1:
        raise InvalidInputError(f"--threshold must be in (0, 1], not {args.threshold}")
    given = {
        name: value
        for name in ("window", "threshold", "goal_mode")
        if (value := getattr(args, name)) is not None
    }
    return CompactionConfig(**given)


def run(ctx: CliContext) -> int:
    from core.context.compaction import apply_sync, dry_run

    store = ctx.store()
    args = ctx.args
    req = _trace_request(store, args)
    action = apply_sync if args.apply else dry_run
    pv = action(store, args.trace, args.level, config=req.transcript_config())
    data = pv.to_json()
    data["limits"] = _limits(req)
    if args.json:
        ctx.emit_json(data)
    else:
        ctx.out.write(_text(pv, data, args.apply))
    return 0


def _trace_request(store: Any, args: Any) -> CompactRequest:
    """The trace's own limits (``core/inspector/compaction.py:trace_request``: an import's
    window, recorded auto-compact point and transcript gap; a run's budget), options winning."""
    from dataclasses import replace

    from core.inspector.compaction import trace_request

    config_from(args)  # the options' checks
    with store.read() as r:
        req = trace_request(r, args.trace, args.level, args.window)
    if args.threshold is not None:
        req = replace(req, threshold=args.threshold, threshold_source="option")
    if args.goal_mode is not None:
        req = replace(req, goal_mode=args.goal_mode)
    return req


def _limits(req: CompactRequest) -> dict[str, Any]:
    """``{window: {tokens, source}, threshold: {tokens, share, source, observed, label},
    not_in_transcript, images_estimated}``."""
    return {
        "window": {"tokens": req.window, "source": req.window_source},
        "threshold": {
            "tokens": int(req.window * req.threshold),
            "share": req.threshold,
            "source": req.threshold_source,
            # the auto-compact point is where the tool's compaction fired: its own threshold
            # is at or below it (``tokens`` is an upper bound)
            "observed": req.threshold_observed,
            "label": req.threshold_label,
        },
        "not_in_transcript": req.not_in_transcript,
        "images_estimated": req.images_estimated,
    }


def _text(pv: Preview, data: dict[str, Any], asked: bool = False) -> str:
    w, th = data["limits"]["window"], data["limits"]["threshold"]
    lines = [
        f"{pv.trace_id}: {data['level']} -> {data['status']} ({data['reason']})",
        f"  window {w['tokens']:,} ({w['source'].replace('-', ' ')}), "
        f"threshold {th['tokens']:,} ({th['label']})"
        + (
            f", {gap:,} of the prompt not in the transcript"
            if (gap := data["limits"]["not_in_transcript"])
            else ""
        )
        + (
            f", {pictured:,} in images (estimated)"
            if (pictured := data["limits"]["images_estimated"])
            else ""
        ),
        f"  messages {data['before']['messages']:,} -> {data['after']['messages']:,}, "
        f"tokens {data['before']['tokens']:,} -> {data['after']['tokens']:,} "
        f"(saved {data['tokens_saved']:,})",
        f"  removed {len(data['removed'])}, replaced {len(data['replaced'])}, "
        f"layers {', '.join(data['layers']) or '-'}",
    ]
    for name, split in data["retention"].items():
        lost = ", ".join(split["lost"][:5]) or "-"
        lines.append(f"  {name}: kept {len(split['kept'])}, lost {len(split['lost'])} ({lost})")
    lines.extend(f"  error: {e}" for e in data["errors"])
    if pv.applied:
        lines.append("  applied")
    elif asked:  # --apply given, and there was nothing to record
        lines.append(f"  not applied: nothing written ({data['status']})")
    else:
        lines.append("  dry run: nothing written (use --apply)")
    return "\n".join(lines) + "\n"
