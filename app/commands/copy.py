"""``ctxlens copy --from URL --to URL [TRACE…]``: move traces between a local store file and
a team store, either way. Lossless, resumable and idempotent (see ``core/transfer.py``)."""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from app.cli import CliContext
from core.errors import ConflictError, CtxlensError

HELP = "copy traces between stores (file <-> team store)"
DESCRIPTION = """Copy traces losslessly; traces already present are skipped, an interrupted copy
leaves nothing partial and re-running finishes it."""


def arguments(p: ArgumentParser) -> None:
    p.add_argument("--from", dest="source", required=True, metavar="URL", help="source store")
    p.add_argument("--to", dest="dest", required=True, metavar="URL", help="destination store")
    p.add_argument("traces", nargs="*", metavar="TRACE", help="trace ids (default: all)")
    p.add_argument(
        "--from-objects",
        metavar="DIR|s3://…",
        help="checkpoint blobs of the source (default: inside a file store, else "
        "$CTXLENS_OBJECTS, else inside the database)",
    )
    p.add_argument("--to-objects", metavar="DIR|s3://…", help="checkpoint blobs of the destination")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _open(target: str, objects: str | None, create: bool) -> Any:
    from core.store import Store
    from core.store.blobs import IN_DATABASE

    if "://" not in target:
        path = Path(target)
        if not create and not path.exists():
            raise CtxlensError(f"{target}: store does not exist")
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        # a file store keeps its blobs inside itself, whatever $CTXLENS_OBJECTS says
        objects = objects or IN_DATABASE
    return Store.open(target, objects=objects)


def run(ctx: CliContext) -> int:
    from core.transfer import copy_traces

    args = ctx.args
    source = _open(args.source, args.from_objects, create=False)
    try:
        dest = _open(args.dest, args.to_objects, create=True)
        try:
            progress = None if args.quiet or args.json else _Progress()
            results = copy_traces(source, dest, args.traces, progress)
        finally:
            dest.close()
    finally:
        source.close()
    if args.json:
        ctx.emit_json([r.to_json() for r in results])
    else:
        for r in results:
            detail = f" — {r.detail}" if r.detail and r.status == "conflict" else ""
            ctx.out.write(f"{r.trace_id}  {r.status:<8} {r.messages:>8} msgs  {r.title}{detail}\n")
    conflicts = [r.trace_id for r in results if r.status == "conflict"]
    if conflicts:
        raise ConflictError(
            f"{len(conflicts)} trace(s) differ at the destination and were left unchanged: "
            + ", ".join(conflicts)
        )
    return 0


class _Progress:
    """One stderr line per trace per second at most (log-friendly, no carriage returns)."""

    def __init__(self) -> None:
        self.last: tuple[str, float] = ("", 0.0)

    def __call__(self, trace_id: str, n: int) -> None:
        now = time.monotonic()
        if self.last[0] != trace_id or now - self.last[1] >= 1.0:
            print(f"copying {trace_id}: {n} messages", file=sys.stderr, flush=True)
            self.last = (trace_id, now)
