"""What a folder import passed over, and why: the same words a direct import of the file gives.

A folder holds more than traces: a Langfuse ChatML map beside the export it came from, an
OpenHands ``base_state.json`` without its events, a README. Importing the file alone says
what it is; a folder import used to drop it without a word, so a user could not tell a file
that is not a trace from one ctxlens failed to see. Every file the walk does not import (and
that is not read as part of another unit) gets a ``Skipped`` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Names a folder walk reads; other files are listed as skipped, not opened.
SUFFIXES = (".jsonl", ".json", ".eval", ".traj", ".ndjson")


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file of a folder that was not imported, with the reason (it starts with the path)."""

    path: str
    reason: str
    format: str | None = None
    """The format the file was detected as, when it was (``--format`` asked for another)."""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason, "format": self.format}


def not_read(path: Path) -> Skipped:
    names = ", ".join(SUFFIXES)
    return Skipped(str(path), f"{path}: not read (a folder import reads only {names} files)")


def other_format(path: Path, found: str, fmt: str) -> Skipped:
    return Skipped(str(path), f"{path}: detected as {found}, not {fmt} (--format {fmt})", found)


def openhands_settings(path: Path) -> str:
    """A conversation's ``base_state.json`` with no events beside it (settings, no trace)."""
    return (
        f"{path}: an OpenHands conversation's settings (base_state.json) without its "
        "events; open the conversation folder that holds the event-*.json files (or events/)"
    )


def summary(skipped: list[Skipped], most: int = 3) -> str:
    """The first reasons, for an error that a folder held nothing to import."""
    if not skipped:
        return ""
    shown = "; ".join(s.reason for s in skipped[:most])
    more = len(skipped) - most
    return f" (skipped: {shown}{f'; and {more} more' if more > 0 else ''})"
