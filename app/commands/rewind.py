"""``ctxlens rewind``: move a trace's head back; nothing is deleted (STORE-4)."""

from __future__ import annotations

from argparse import ArgumentParser

from app.cli import CliContext

HELP = "move the head of a trace back to a message"


def arguments(p: ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--to", type=int, required=True, metavar="SEQ", help="message sequence")
    p.add_argument("--json", action="store_true")


def run(ctx: CliContext) -> int:
    from core.delegation.report import ref_json
    from core.delegation.snapshots import dropped_by_rewind
    from core.delegation.store import grants_made

    store = ctx.store()
    tr = store.trace(ctx.args.trace)
    with store.read() as r:  # DEL-3: what the rewind ends, said before it ends it
        ending = dropped_by_rewind(grants_made(r, tr.id), tr.id, ctx.args.to)
    old, new = store.rewind(tr.id, ctx.args.to)
    with store.read() as r:
        length = r.main_path_length(tr.id)
    result = {"trace_id": tr.id, "from": old, "to": new, "head": new, "main_path_length": length}
    result["grants_ended"] = [{"holder": g.holder, **ref_json(g)} for g in ending]
    if ctx.args.json:
        ctx.emit_json(result)
        return 0
    ended = f"; ended {len(ending)} ref grants it made after #{new}" if ending else ""
    ctx.out.write(f"{tr.id}: head {old} -> {new} ({length} messages on the main path{ended})\n")
    return 0
