"""``ctxlens self-test`` (also ``ctxlens --self-test``): check this installation offscreen.

The checks are in ``app/selftest.py``; packaging runs ``<bundle>/ctxlens --self-test``.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser

from app.cli import CliContext

CHECK_NAMES = (
    "encodings",
    "migrations",
    "demo store",
    "resources",
    "qt platform",
    "images",
    "main window",
)


HELP = "check this installation (encodings, migrations, demo store, Qt, window)"
DESCRIPTION = """Open a temporary demo store offscreen, render the main window once and check
the shipped encodings and migrations, without the network. Prints one 'ok: …' or 'FAIL: …' line
per check; exit 0 only when all pass. Never touches your own store or settings."""


def arguments(p: ArgumentParser) -> None:
    p.add_argument(
        "--only", action="append", choices=CHECK_NAMES, metavar="CHECK", help="run one check"
    )


def run(ctx: CliContext) -> int:
    from app.selftest import run as run_self_test

    return run_self_test(ctx.out, sys.stderr, getattr(ctx.args, "only", None))
