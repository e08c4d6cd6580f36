"""Per-call usage from an OpenHands V1 conversation's ``stats`` updates.

OpenHands logs no usage on its events; it logs the LLM's accumulated usage in
``ConversationStateUpdateEvent`` (key ``stats``, ``usage_to_metrics.default``), written
just before the response's events. The difference between two updates is one call's usage
when it equals the update's ``per_turn_token`` (prompt + completion of the latest call);
otherwise more than one call happened between them and nothing is attributed (no guess).
"""

from __future__ import annotations

from typing import Any

from core.importers.content import as_dict

FIELDS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens",
          "reasoning_tokens")  # fmt: skip


class StatsCalls:
    """The accumulated usage seen so far; ``update`` gives the call an update adds."""

    def __init__(self) -> None:
        self.seen = dict.fromkeys(FIELDS, 0)

    def update(self, value: Any) -> tuple[dict[str, Any], str] | None:
        """``(usage, model)`` of the one call this ``stats`` value adds, else ``None``."""
        metrics = as_dict(as_dict(as_dict(value).get("usage_to_metrics")).get("default"))
        acc = as_dict(metrics.get("accumulated_token_usage"))
        now = {k: acc[k] if isinstance(acc.get(k), int) else 0 for k in FIELDS}
        delta = {k: now[k] - self.seen[k] for k in FIELDS}
        self.seen = now
        turn = acc.get("per_turn_token")
        one = delta["prompt_tokens"] + delta["completion_tokens"]
        if one <= 0 or turn != one or min(delta.values()) < 0:
            return None
        usage = {
            "prompt_tokens": delta["prompt_tokens"],
            "completion_tokens": delta["completion_tokens"],
            "cached_tokens": delta["cache_read_tokens"],
            "cache_creation_tokens": delta["cache_write_tokens"],
            "reasoning_tokens": delta["reasoning_tokens"],
            "source": "openhands stats (accumulated usage, this call's difference)",
        }
        return usage, str(metrics.get("model_name") or acc.get("model") or "")
