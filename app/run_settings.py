"""``--set KEY=VALUE`` on ``run``, ``demo`` and ``replay``: one argument definition, and a
help text listing every ``RunConfig`` setting with its default, generated from the
dataclass when the help is printed (so it cannot drift, and parsing stays light)."""

from __future__ import annotations

import argparse
from typing import Any

_MARK = "@@run-settings@@"


class _SettingsHelp(argparse.RawDescriptionHelpFormatter):
    def add_text(self, text: str | None) -> None:
        if text == _MARK:
            from core.run.config import settings_help

            text = "run settings (--set KEY=VALUE; default shown):\n" + settings_help()
        super().add_text(text)


def settings_parser_options() -> dict[str, Any]:
    """``add_parser`` options that end a command's help with the list of run settings."""
    return {"epilog": _MARK, "formatter_class": _SettingsHelp}


def add_set_argument(parser: argparse.ArgumentParser) -> None:
    """The repeatable ``--set KEY=VALUE``."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a run setting (listed below), e.g. --set micro_keep_recent=6; repeatable",
    )
