"""Which trace a proxied call belongs to, and which stored message each sent one is.

A message's key is a hash of what the model sees of it (role, text, tool calls with
canonical arguments, tool result id, non-text parts other than reasoning), prefixed with its
role letter. A request continues a trace when its key list starts with the full key list of
an earlier call of that trace (with or without that call's response): the agent resent the
conversation and added to it. Failing that, a request that shares the first system and user
turns with a trace's latest call continues it too (an agent that compacted its history
keeps those); anything else starts a new trace. ``X-Ctxlens-Trace`` overrides all of this.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from core.records import NewMessage

_REASONING = ("thinking", "redacted_thinking", "reasoning")


def message_key(m: NewMessage) -> str:
    calls = [[c.id, c.name, _canonical(c.arguments)] for c in m.tool_calls]
    parts = [p for p in m.parts or () if not (isinstance(p, dict) and p.get("type") in _REASONING)]
    blob = json.dumps(
        [m.role, m.content, calls, m.tool_call_id or "", parts],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return m.role[0] + ":" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:30]


def _canonical(arguments: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return arguments


def prefix_hashes(keys: Sequence[str]) -> list[str]:
    """``out[i]`` identifies ``keys[: i + 1]`` (chained, so a long list costs O(n))."""
    out: list[str] = []
    h = ""
    for key in keys:
        h = hashlib.sha256((h + key).encode("ascii")).hexdigest()[:32]
        out.append(h)
    return out


def _opening(keys: Sequence[str]) -> int:
    """Length of the opening a compacting agent keeps: system turns and the first user turn."""
    for i, key in enumerate(keys):
        if key.startswith("u:"):
            return i + 1
    return 0


class Conversations:
    """Known key lists of recorded calls, for matching the next request to its trace."""

    def __init__(self) -> None:
        self._full: dict[str, str] = {}
        self._latest: dict[str, list[str]] = {}

    def add(self, trace_id: str, keys: Sequence[str]) -> None:
        if keys:
            self._full[prefix_hashes(keys)[-1]] = trace_id
            self._latest[trace_id] = list(keys)

    def find(self, keys: Sequence[str]) -> str | None:
        for h in reversed(prefix_hashes(keys)):
            if h in self._full:
                return self._full[h]
        return self._shared_opening(keys)

    def _shared_opening(self, keys: Sequence[str]) -> str | None:
        n = _opening(keys)
        if n < 1:
            return None
        opening = list(keys[:n])
        for trace_id, latest in reversed(self._latest.items()):
            if latest[:n] == opening:
                return trace_id
        return None
