"""Token counts of a recorded usage object, whatever tool or provider wrote it.

Shapes read: the normalized/OpenAI shape (``prompt_tokens`` incl. cached,
``prompt_tokens_details.cached_tokens``, ``cached_tokens``, ``cache_creation_tokens``),
Anthropic (``input_tokens`` excludes ``cache_read_input_tokens`` and
``cache_creation_input_tokens``), Codex (``input_tokens`` includes ``cached_input_tokens``)
and Inspect (``input_tokens_cache_read`` / ``_write`` beside ``input_tokens``). A normalized
import keeps the tool's own record under ``raw``; the top-level keys win.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TokenUsage:
    prompt: int
    """All input tokens, including cache reads and cache writes."""
    cached: int
    cache_creation: int
    completion: int

    @property
    def uncached_input(self) -> int:
        return max(0, self.prompt - self.cached - self.cache_creation)


def token_usage(usage: Any) -> TokenUsage | None:
    """The counts in ``usage``, or ``None`` when it records no token counts."""
    if not isinstance(usage, Mapping):
        return None
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return _openai(usage)
    if "input_tokens" in usage or "output_tokens" in usage:
        return _input_output(usage)
    return None


def _openai(u: Mapping[str, Any]) -> TokenUsage:
    details = u.get("prompt_tokens_details")
    cached = _n(u, "cached_tokens") or _n(u, "prompt_cache_hit_tokens")
    if isinstance(details, Mapping):
        cached = cached or _n(details, "cached_tokens")
    return TokenUsage(
        prompt=_n(u, "prompt_tokens"),
        cached=cached,
        cache_creation=_n(u, "cache_creation_tokens"),
        completion=_n(u, "completion_tokens"),
    )


def _input_output(u: Mapping[str, Any]) -> TokenUsage:
    read = _n(u, "cache_read_input_tokens") or _n(u, "input_tokens_cache_read")
    write = _n(u, "cache_creation_input_tokens") or _n(u, "input_tokens_cache_write")
    inp = _n(u, "input_tokens")
    if "cached_input_tokens" in u:  # Codex: input_tokens already includes the cached part
        return TokenUsage(inp, _n(u, "cached_input_tokens"), 0, _n(u, "output_tokens"))
    return TokenUsage(inp + read + write, read, write, _n(u, "output_tokens"))


def _n(u: Mapping[str, Any], key: str) -> int:
    value = u.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0
