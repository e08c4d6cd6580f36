"""The ``ctxlens`` command: global options, subcommand registry, one error policy.

Each subcommand lives in ``app/commands/<name>.py`` and declares only what is its own:
``HELP``, optionally ``DESCRIPTION``, ``RUN_SETTINGS`` and ``RERUNS``, ``arguments(parser)`` and the
handler ``run(ctx)``, which gets a ``CliContext`` and returns an exit code (``add_command``
builds the parser from them). Expected failures raise
``CtxlensError`` and become one line on stderr with exit code 2; nothing prints a traceback
for bad input.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from app.run_settings import add_set_argument, settings_parser_options
from core.errors import CtxlensError

#: Subcommand modules, in help order. Adding a command = one module + one line here.
COMMANDS = (
    "app.commands.traces",
    "app.commands.search",
    "app.commands.show",
    "app.commands.context",
    "app.commands.rewind",
    "app.commands.compact",
    "app.commands.demo",
    "app.commands.run",
    "app.commands.replay",
    "app.commands.fork",
    "app.commands.resume",
    "app.commands.compare",
    "app.commands.delegation",
    "app.commands.export",
    "app.commands.import_",
    "app.commands.copy",
    "app.commands.proxy",
    "app.commands.watch",
    "app.commands.serve",
    "app.commands.gui",
    "app.commands.self_test",
)


class CliContext:
    """What a subcommand needs: the parsed args, the store (opened on first use), output."""

    def __init__(self, args: argparse.Namespace, out: IO[str]) -> None:
        self.args = args
        self.out = out
        self._store: Any = None

    @property
    def db(self) -> str:
        from app.paths import default_db

        return str(self.args.db or default_db())

    def store(self, create: bool = False) -> Any:
        from core.store import Store

        if self._store is None:
            target = self.db
            if "://" not in target and not create and not Path(target).exists():
                raise CtxlensError(f"{target}: store does not exist")
            if "://" not in target and create:
                Path(target).parent.mkdir(parents=True, exist_ok=True)
            self._store = Store.open(target)
        return self._store

    def emit_json(self, obj: Any) -> None:
        json.dump(obj, self.out, ensure_ascii=False, indent=2)
        self.out.write("\n")

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def command_name(module: str) -> str:
    """The command a module registers: ``app.commands.import_`` → ``import``."""
    return module.rsplit(".", 1)[-1].rstrip("_").replace("_", "-")


def named_command(argv: Sequence[str]) -> str | None:
    """The known command ``argv`` names (after the global options), else ``None``."""
    rest = iter(argv)
    for arg in rest:
        if arg == "--db":
            next(rest, None)
        elif not arg.startswith("-"):
            names = {command_name(m) for m in COMMANDS}
            return arg if arg in names else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that command's (a command starts without loading
    the other 20 modules: ``ctxlens traces`` is start-up bound)."""
    parser = argparse.ArgumentParser(
        prog="ctxlens",
        description="Inspect, step, rewind, compact and replay LLM-agent context.",
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="store file or SQLAlchemy URL (default: $CTXLENS_DB or the user data folder)",
    )
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation offscreen and exit (same as the self-test command)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is None or command_name(name) == only:
            add_command(sub, importlib.import_module(name))
    return parser


def add_command(sub: Any, command: ModuleType) -> argparse.ArgumentParser:
    """The parser of one command module: named after the module (``command_name``), its
    ``HELP``/``DESCRIPTION``, ``--set`` when it declares ``RUN_SETTINGS``, then its own
    ``arguments``; ``run`` handles it."""
    options = settings_parser_options() if getattr(command, "RUN_SETTINGS", False) else {}
    parser: argparse.ArgumentParser = sub.add_parser(
        command_name(command.__name__),
        help=command.HELP,
        description=getattr(command, "DESCRIPTION", None),
        **options,
    )
    if options:
        add_set_argument(parser)
    command.arguments(parser)
    parser.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(named_command(argv))
    args = parser.parse_args(argv)
    if args.self_test:
        if args.command not in (None, "self-test"):
            parser.error("--self-test takes no command")
        from app.commands.self_test import run as self_test

        args.handler = self_test
    elif args.command is None:
        return _default(args, parser)
    if getattr(sys.modules[args.handler.__module__], "RERUNS", True):
        register_rerunners()
    ctx = CliContext(args, out or sys.stdout)
    try:
        return int(args.handler(ctx) or 0)
    except CtxlensError as exc:
        print(f"ctxlens: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ctxlens: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    finally:
        ctx.close()


def register_rerunners() -> None:
    """Register how demo traces run again (``core/run/rerunners.py``) before a command runs;
    a command that runs no trace again says ``RERUNS = False`` and starts without it (the
    demo's registration imports its world options and the delegation config: ~5 ms of
    ``ctxlens traces``, which is start-up bound)."""
    import core.demo  # noqa: F401


def _default(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """No subcommand: the GUI when it exists, otherwise the help text."""
    if "app.commands.gui" in COMMANDS:
        return main([*(["--db", args.db] if args.db else []), "gui"])
    parser.print_help()
    return 0


if __name__ == "__main__":  # ``python -m app.cli`` is ``ctxlens`` too (as ``python -m app``)
    raise SystemExit(main())
