"""``ctxlens show``: the main path of a trace, streamed (fine for a million messages)."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import TYPE_CHECKING, Any

from app.cli import CliContext

if TYPE_CHECKING:
    from core.records import Message


HELP = "show the main path of a trace"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE", help="trace id (or a unique prefix)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--limit", type=int, default=None, help="show at most N messages")
    p.add_argument("--offset", type=int, default=0, help="start at main-path row N")


def message_row(m: Message, in_context: bool, created_recorded: bool = True) -> dict[str, Any]:
    """One message of ``show --json``; ``created_recorded``: false where ``created_at`` is
    the fill of a message the source gave no time (``core/undated.py``)."""
    return {
        "sequence": m.sequence,
        "parent_sequence": m.parent_sequence,
        "role": m.role,
        "content": m.content,
        "tool_calls": [c.to_json() for c in m.tool_calls],
        "tool_call_id": m.tool_call_id,
        "goal_id": m.goal_id,
        "branch_type": m.branch_type,
        "agent_name": m.agent_name,
        "kind": m.kind,
        "token_count": m.token_count,
        "in_context": in_context,
        "name": m.name,
        "usage": m.usage,
        "created_at": m.created_at,
        "created_recorded": created_recorded,
    }


def run(ctx: CliContext) -> int:
    from core.context.view import current_items
    from core.importers.usage import recorded_totals
    from core.inspector.recorded_time import basis_of
    from core.undated import created_recorded

    store = ctx.store()
    with store.read() as r:
        tr = r.find_trace(ctx.args.trace)
        items, _ = current_items(r, tr.id)
        live = {i.sequence for i in items if i.sequence is not None}
        dated = created_recorded(tr.metadata)
        segs = r.segments(tr.id)
        total = sum(len(s) for s in segs)
        offset = max(0, ctx.args.offset)
        end = total if ctx.args.limit is None else min(total, offset + ctx.args.limit)
        out = ctx.out
        if ctx.args.json:
            trace = {
                "id": tr.id,
                "title": tr.title,
                "source": tr.source,
                "created_at": tr.created_at,
                "head": tr.head,
                "messages": tr.messages,
                "main_path_length": total,
                # the run's usage as the tool recorded it (SWE-agent's model_stats), or null
                "recorded_totals": totals.to_json()
                if (totals := recorded_totals(tr.metadata))
                else None,
                # how times written without a zone were read (core/importers/times.py)
                "time_basis": basis_of(tr.metadata),
            }
            out.write('{"trace": ' + json.dumps(trace, ensure_ascii=False) + ', "messages": [')
        first = True
        for start in range(offset, end, 2000):
            for m in r.main_path_page(tr.id, start, min(2000, end - start), segments=segs):
                if ctx.args.json:
                    out.write(
                        ("\n" if first else ",\n")
                        + json.dumps(
                            message_row(m, m.sequence in live, dated(m.sequence)),
                            ensure_ascii=False,
                        )
                    )
                else:
                    out.write(_line(m, m.sequence in live))
                first = False
        if ctx.args.json:
            out.write("\n]}\n")
    return 0


def _line(m: Message, live: bool) -> str:
    text = m.content.replace("\n", " ")
    if m.tool_calls:
        text = " ".join(f"{c.name}({c.arguments[:40]})" for c in m.tool_calls) + " " + text
    mark = " " if live else "·"
    goal = m.goal_id or "-"
    return f"{mark}{m.sequence:>7} {m.role:<9} {goal:<6} {m.token_count:>6}t  {text[:100]}\n"
