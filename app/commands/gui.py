"""``ctxlens gui``: the inspector window (``ctxlens`` with no arguments runs this too).

Qt is imported only inside ``run`` so every other command stays fast.
"""

from __future__ import annotations

import argparse
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
    if ctx.args.file:
        from app.open_file import resolve

        db, imported = resolve(ctx.args.file, db, default_store=ctx.args.db is None)
        trace = trace or imported
    opts = GuiOptions(
        db=db,
        trace=trace,
        select=ctx.args.select,
        screenshot=ctx.args.screenshot,
        settings=ctx.args.settings,
        build_store=not ctx.args.file and ctx.args.db is None and needs_default_store(db),
    )
    return launch(opts)
