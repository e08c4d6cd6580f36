"""The context window a trace's model had, and where that number comes from.

In order: the trace itself (Codex ``model_context_window``, a window an importer read from
the tool's record), the configuration of a ctxlens run, the shipped table of known models
(``core/context/data/model_windows.json``, each row dated with its source), else unknown.
The embedded runtime's limits never stand in for another tool's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).with_name("data") / "model_windows.json"
IMPORTED = frozenset(
    {"claude-code", "codex", "inspect", "openai", "openhands", "otel", "swe-agent", "proxy"}
)
"""Trace sources of another tool, whose limits are that tool's, not the runtime's: written
by an importer, or recorded by the proxy from the calls an agent made (review 10: a proxy
trace was given the runtime's 128,000-token window as "config", beside "limits: defaults")."""
_BOUNDARY = "-.:@_ "


@dataclass(frozen=True)
class Window:
    tokens: int | None
    source: str
    """``trace``, ``model-table``, ``config``, ``defaults`` or ``unknown``."""
    detail: str = ""
    """What the number rests on (the field, the table row's source and date)."""


@cache
def _rows() -> tuple[dict[str, Any], ...]:
    data = json.loads(TABLE.read_text(encoding="utf-8"))
    return tuple(sorted(data["models"], key=lambda r: -len(r["prefix"])))


def table_window(model: str) -> Window | None:
    """The known window of ``model`` from the shipped table (longest matching prefix)."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    for row in _rows():
        prefix = row["prefix"]
        if name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in _BOUNDARY):
            detail = f"{row['prefix']}: {row['source']} (as of {row['date']})"
            return Window(int(row["tokens"]), "model-table", detail)
    return None


def is_imported(source: str) -> bool:
    return source in IMPORTED


def recorded_window(metadata: Any) -> Window | None:
    """A window the trace recorded (an importer stores it as ``metadata["window"]``)."""
    if not isinstance(metadata, dict):
        return None
    meta = metadata.get("window")
    if isinstance(meta, dict) and isinstance(meta.get("tokens"), int) and meta["tokens"] > 0:
        return Window(int(meta["tokens"]), "trace", str(meta.get("field") or ""))
    own = metadata.get("context_window")  # an OpenHands/LiteLLM completion log's own field
    if isinstance(own, int) and not isinstance(own, bool) and own > 0:
        return Window(own, "trace", "context_window")
    return None


def imported_window(metadata: Any) -> Window:
    """The window of an imported trace: recorded, else the model table, else unknown."""
    found = recorded_window(metadata)
    if found is not None:
        return found
    model = metadata.get("model") if isinstance(metadata, dict) else None
    if isinstance(model, str) and model:
        known = table_window(model)
        if known is not None:
            return known
        return Window(None, "unknown", f"model {model!r} is not in the table")
    return Window(None, "unknown", "the trace names no model")
