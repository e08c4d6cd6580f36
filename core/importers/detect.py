"""Which tool wrote a file: decided from its content (the first record or the first keys),
with the file name only as a tie-breaker between formats that look the same.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError
from core.importers import claude_code
from core.importers.jsonstream import TOO_DEEP, BeyondLimits, JsonDocument
from core.importers.non_traces import langfuse_chatml
from core.importers.reading import MAX_LINE, first_record
from core.importers.walk import open_file
from core.store.export_format import FORMAT as CTXLENS_FORMAT

#: Format names accepted by ``--format`` (``auto`` detects).

CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CODEX_ITEMS = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "local_shell_call"}
)
HEAD = 1 << 16
#: Walking an object's top level for its ``format``: members and bytes read at most.
MEMBERS = 64
BUDGET = 8 << 20


def sniff(path: Path) -> str | None:
    """The format of one file, or ``None`` when no importer recognises it."""
    with open_file(path) as f:
        head = f.read(HEAD)
    if head[:4] == b"PK\x03\x04":
        return "inspect" if _is_eval(path) else None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] not in (b"{", b"["):
        return None
    first = _first_line_value(text, path)
    if first is None and text[:1] == b"{" and b"\n" not in text:
        first = first_record(path, MAX_LINE)  # a long first line (pasted images)
    if isinstance(first, dict):
        fmt = record_format(first)
        if fmt is not None:
            return fmt
    if text[:1] == b"[":
        return _list_format(path)
    if _declared_format(path, text) == CTXLENS_FORMAT:
        return "ctxlens"
    if _has(text, "success") and langfuse_chatml(path) is not None:
        return None  # chat messages of a trace, not a trace (``non_traces.refusal`` says so)
    return _object_format(text)


def _is_eval(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist()[:10_000])
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    return (
        "header.json" in names
        or "_journal/start.json" in names
        or any(n.startswith("samples/") for n in names)
    )


def _first_line_value(text: bytes, path: Path) -> Any:
    line, sep, _ = text.partition(b"\n")
    if not sep and len(text) >= HEAD:
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None
    except RecursionError:
        raise BeyondLimits(f"{path}:1: {TOO_DEEP}") from None


def record_format(rec: dict[str, Any]) -> str | None:
    """The format of a JSON Lines file from its first record."""
    if rec.get("format") == CTXLENS_FORMAT and "trace" in rec:
        return "ctxlens"  # a whole export on one line (re-serialized by json.dump)
    kind = rec.get("type")
    if not isinstance(kind, str):
        kind = None  # {"type": {}} is no record type of any format
    elif claude_code.looks_like(rec):
        return "claude-code"
    if kind in CODEX_TYPES and "payload" in rec:
        return "codex"
    if "instructions" in rec and "id" in rec and "timestamp" in rec and len(rec) <= 6:
        return "codex"  # rollouts before the session_meta wrapper
    if isinstance(rec.get("kind"), str) and ("source" in rec or "id" in rec) and "role" not in rec:
        return "openhands"
    if "resourceSpans" in rec:
        return "otel"
    if "role" in rec and ("content" in rec or "tool_calls" in rec):
        return "openai"
    if isinstance(rec.get("messages"), list) and not rec.keys() & {"trajectory", "info"}:
        return "openai"
    return None


def _list_format(path: Path) -> str | None:
    with open_file(path) as f:
        doc = JsonDocument(f, str(path))  # the first item, however big (a pasted image)
        try:
            doc.begin()
            items = doc.items()
            item = next(items, None)
        except InvalidInputError:
            # a list whose first item is cut short, not UTF-8 or not JSON: no importer
            # could read it either; say why, with the line (not "unknown format")
            raise
    if isinstance(item, list):  # a list of conversations (benchmark histories)
        first = item[0] if item else None
        return "openai" if isinstance(first, dict) and "role" in first else None
    if not isinstance(item, dict):
        return None
    if "role" not in item and any(isinstance(item.get(k), list) for k in ("messages", "traj")):
        return "openai"
    if "source" in item and ("action" in item or "observation" in item):
        return "openhands"
    if isinstance(item.get("kind"), str) and "source" in item:
        return "openhands"
    if "role" in item:
        return "swe-agent" if _traj_name(path) else "openai"
    if "resourceSpans" in item:
        return "otel"
    if "attributes" in item and (
        "context" in item or "spanContext" in item or "spanId" in item or "span_id" in item
    ):
        return "otel"
    return None


def _traj_name(path: Path) -> bool:
    return path.name.endswith((".traj", ".traj.json"))


def _has(text: bytes, *keys: str) -> bool:
    return all(f'"{k}"'.encode() in text for k in keys)


def _declared_format(path: Path, head: bytes) -> str | None:
    """The top-level ``format`` member of a JSON object, found by walking its members
    (any whitespace, any key order): at most ``MEMBERS`` members and ``BUDGET`` bytes."""
    with open_file(path) as f:
        doc = JsonDocument(f, str(path), max_value=BUDGET)
        try:
            if doc.begin() != "{":
                return None
            for i, key in enumerate(doc.members()):
                value = doc.value()
                if key == "format":
                    return value if isinstance(value, str) else None
                if i >= MEMBERS or f.tell() > BUDGET:
                    break
        except BeyondLimits as exc:
            if TOO_DEEP in str(exc):
                raise
        except InvalidInputError:
            pass
    return CTXLENS_FORMAT if f'"{CTXLENS_FORMAT}"'.encode() in head else None


def _object_format(text: bytes) -> str | None:
    if _has(text, "resourceSpans"):
        return "otel"
    if _has(text, "trace", "observations"):
        return "otel"
    if _has(text, "spans") and _has(text, "attributes"):
        return "otel"
    if _has(text, "version", "eval") and (_has(text, "samples") or _has(text, "status")):
        return "inspect"
    if (
        _has(text, "trajectory")
        or _has(text, "trajectory_format")
        or (_has(text, "history", "info") and not _has(text, "eval"))
        or (
            _has(text, "history", "message_type") and text.lstrip()[1:].lstrip()[:9] == b'"history"'
        )
    ):  # the last: a demonstration, ``{"history": [...]}`` alone (SWE-agent's demos)
        return "swe-agent"
    if _has(text, "persistence_dir") or (
        _has(text, "agent", "llm", "kind") and not _has(text, "messages")
    ):
        return "openhands"
    if _has(text, "kind", "source") and not _has(text, "messages"):
        return "openhands"
    if _has(text, "messages"):
        return "openai"
    return None
