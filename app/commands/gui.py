"""``ctxlens gui``: the inspector window (``ctxlens`` with no arguments runs this too).

Qt is imported only inside ``run`` so every other command stays fast.
"""

from __future__ import annotations

import argparse
import sys
from argparse import ArgumentParser

from app.cli import CliContext
from core.errors import CtxlensError

HELP = "open the inspector window"


def arguments(p: ArgumentParser) -> None:
    p.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="a store to open, or a trace file to import into the store and show",
    )
    p.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help="store to open")
    p.add_argument("--trace", metavar="ID", help="trace to show (id or unique prefix)")
    p.add_argument("--select", type=int, metavar="SEQ", help="message to select")
    p.add_argument(
        "--screenshot",
        metavar="FILE.png",
        help="render the window at 1600x1000 once the trace has loaded, save it, exit",
    )
    p.add_argument("--settings", metavar="FILE.ini", help=argparse.SUPPRESS)


def run(ctx: CliContext) -> int:
    from app.qt_libs import guard

    problem = guard()  # before Qt: a missing xcb library would abort the process
    if problem is not None:
        raise CtxlensError(problem)
    from app.default_store import needs_default_store
    from app.gui import GuiOptions, launch

    db = ctx.db
    trace = ctx.args.trace
    opened, problem = _open_file(ctx, db)
    if opened is not None:
        db, imported = opened
        trace = trace or imported
    opts = GuiOptions(
        db=db,
        trace=trace,
        select=ctx.args.select,
        screenshot=ctx.args.screenshot,
        settings=ctx.args.settings,
        build_store=opened is None and ctx.args.db is None and needs_default_store(db),
        problem=problem,
    )
    return launch(opts)


def _open_file(ctx: CliContext, db: str) -> tuple[tuple[str, str | None] | None, str | None]:
    """The store and trace of ``FILE`` when it opens, else what is wrong with it: a file
    double-clicked in a file manager has no terminal, so the window opens anyway (on the
    store) and says it, rather than the process printing to nowhere and exiting."""
    if not ctx.args.file:
        return None, None
    from app.open_file import resolve

    try:
        return resolve(ctx.args.file, db, default_store=ctx.args.db is None), None
    except CtxlensError as exc:
        print(f"ctxlens: error: {exc}", file=sys.stderr)
        return None, str(exc)
