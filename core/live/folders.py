"""Which folders ``ctxlens watch`` looks in when none is named.

The tools' own session folders (Claude Code: ``$CLAUDE_CONFIG_DIR/projects``, default
``~/.claude/projects``; Codex: ``$CODEX_HOME/sessions``, default ``~/.codex/sessions``)
plus the folders the user added, kept in a small JSON file that the CLI and the GUI share
(``$CTXLENS_WATCH_FILE``, default ``$XDG_CONFIG_HOME/ctxlens/watch.json``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from core.errors import InvalidInputError


def tool_folders(env: Mapping[str, str] | None = None) -> list[Path]:
    """The Claude Code projects folder and the Codex sessions folder."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    claude = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    return [claude / "projects", codex / "sessions"]


def watch_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("CTXLENS_WATCH_FILE"):
        return Path(env["CTXLENS_WATCH_FILE"])
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "ctxlens" / "watch.json"


def added_folders(path: Path | None = None) -> list[Path]:
    """The folders the user added (an unreadable file is an error naming it)."""
    path = path or watch_file()
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Path(str(p)) for p in data.get("folders", [])]
    except (OSError, ValueError, AttributeError, TypeError) as exc:
        raise InvalidInputError(f"{path}: not a ctxlens watch list ({exc})") from None


def save_folders(folders: list[Path], path: Path | None = None) -> None:
    path = path or watch_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    unique = list(dict.fromkeys(str(p) for p in folders))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"folders": unique}, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def default_folders() -> list[Path]:
    """What ``ctxlens watch`` with no folder watches (missing folders are kept: the tool
    may create them later)."""
    return list(dict.fromkeys([*tool_folders(), *added_folders()]))
