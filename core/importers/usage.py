"""One shape for the token usage other tools record with a model call.

Every tool spells usage its own way, and they disagree on what "input" means: Anthropic
(Claude Code) reports ``input_tokens`` *beside* the cache reads and writes, OpenAI (Codex,
chat completions) reports the cached tokens as a *part of* the input. An imported call's
``usage`` is normalized so ``prompt_tokens`` is always every token the model read (cache
reads and writes included), and the tool's own record stays under ``raw``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.fields_json import FieldsJson

NORMALIZED = "normalized"


def _int(value: Any) -> int | None:
    if type(value) is int:  # the usual case first (``bool`` is not ``int`` here)
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _first(raw: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = _int(raw.get(key))
        if value is not None:
            return value
    return None


def _some(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)


def _details(raw: Mapping[str, Any], outer: str, inner: str) -> int | None:
    sub = raw.get(outer)
    return _int(sub.get(inner)) if isinstance(sub, Mapping) else None


def _anthropic(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic Messages usage: cache reads and writes are not part of ``input_tokens``."""
    base = _first(raw, "input_tokens") or 0
    read = _first(raw, "cache_read_input_tokens") or 0
    write = _first(raw, "cache_creation_input_tokens") or 0
    return {
        "prompt_tokens": base + read + write,
        "completion_tokens": _first(raw, "output_tokens"),
        "cached_tokens": read,
        "cache_creation_tokens": write,
    }


def _inspect(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Inspect's ``ModelUsage``: whether the cache fields are inside ``input_tokens``
    depends on the provider; ``total_tokens`` tells (it adds them when they are apart)."""
    base = _first(raw, "input_tokens") or 0
    out = _first(raw, "output_tokens") or 0
    read = _first(raw, "input_tokens_cache_read") or 0
    write = _first(raw, "input_tokens_cache_write") or 0
    total = _first(raw, "total_tokens")
    apart = (read or write) and total is not None and total >= base + out + read + write
    return {
        "prompt_tokens": base + read + write if apart else base,
        "completion_tokens": _first(raw, "output_tokens"),
        "cached_tokens": read,
        "cache_creation_tokens": write,
        "reasoning_tokens": _first(raw, "reasoning_tokens"),
    }


def _openai(raw: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI chat completions, the Responses API and Codex ``token_count``: the cached
    tokens are part of the input."""
    return {
        "prompt_tokens": _first(raw, "prompt_tokens", "input_tokens"),
        "completion_tokens": _first(raw, "completion_tokens", "output_tokens"),
        "cached_tokens": _some(
            _first(raw, "cached_input_tokens", "cached_tokens", "cache_read_input_tokens"),
            _details(raw, "prompt_tokens_details", "cached_tokens"),
            _details(raw, "input_tokens_details", "cached_tokens"),
        ),
        "cache_creation_tokens": _first(
            raw, "cache_creation_tokens", "cache_creation_input_tokens"
        ),
        "reasoning_tokens": _some(
            _first(raw, "reasoning_output_tokens", "reasoning_tokens"),
            _details(raw, "completion_tokens_details", "reasoning_tokens"),
            _details(raw, "output_tokens_details", "reasoning_tokens"),
        ),
    }


def normalize_usage(raw: Any) -> dict[str, Any] | None:
    """``{prompt_tokens, completion_tokens, cached_tokens, cache_creation_tokens, raw}``
    (plus ``reasoning_tokens`` when known) over the tool's own keys, which stay readable
    where they were; ``None`` when ``raw`` holds no usage. Already normalized usage is
    returned as it is."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    if raw.get(NORMALIZED) is True:
        return dict(raw)
    if "prompt_tokens" in raw:  # chat completions (LiteLLM adds Anthropic's cache keys)
        out = _openai(raw)
    elif "cache_read_input_tokens" in raw or "cache_creation_input_tokens" in raw:
        out = _anthropic(raw)
    elif "input_tokens_cache_read" in raw or "input_tokens_cache_write" in raw:
        out = _inspect(raw)
    else:
        out = _openai(raw)
    if out["prompt_tokens"] is None and out["completion_tokens"] is None:
        return None
    total = _first(raw, "total_tokens")
    if total is not None:
        out["total_tokens"] = total
    clean = {k: v for k, v in out.items() if v is not None or k != "reasoning_tokens"}
    return {**raw, **clean, NORMALIZED: True, "raw": dict(raw)}


OPEN_AT_STOP = "open_at_stop"
"""Key of a call's normalized usage: the response was still being written when the live
capture recording it stopped, so its output tokens may be short of the response's (Claude
Code writes them final only on a response's last record). A watch that reads the rest sets
the usage again, without the key (``core/importers/claude_code.py:_Session._note``)."""


OPEN_AT_STOP_WORDS = "as of the watch's stop: the response was still being written"
"""What a call's output tokens marked ``OPEN_AT_STOP`` are, in the panes and the CLI."""


def open_at_stop(raw: Any) -> dict[str, Any] | None:
    """``raw`` normalized, marked ``OPEN_AT_STOP``."""
    norm = normalize_usage(raw)
    return None if norm is None else {**norm, OPEN_AT_STOP: True}


# -- a run's totals ----------------------------------------------------------------------
RECORDED_TOTALS = "recorded_totals"
"""Trace metadata key: the run's usage totals as the tool recorded them (not per call)."""


@dataclass(frozen=True)
class RecordedTotals(FieldsJson):
    """A whole run's usage as the tool recorded it, where it records no call's own
    (SWE-agent's ``info.model_stats``: ``tokens_sent``, ``tokens_received``,
    ``instance_cost``, ``api_calls``). Read with ``recorded_totals``; each figure is the
    tool's, ``None`` where it recorded none."""

    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    calls: int | None
    source: str
    """Who recorded them and where ("SWE-agent info.model_stats")."""

    @property
    def counts_tokens(self) -> bool:
        """The totals hold token usage: a model that counted none (SWE-agent's replay
        model: 0 sent and 0 received over 13 calls) recorded no usage, only calls."""
        return bool(self.input_tokens or self.output_tokens)


def model_stats_totals(stats: Any) -> dict[str, Any] | None:
    """SWE-agent's ``info.model_stats`` as ``recorded_totals`` (``None``: none recorded).
    Its ``tokens_sent``/``tokens_received``/``api_calls``/``instance_cost`` are this
    instance's (the model resets them per instance; ``total_cost`` runs on over a batch)."""
    if not isinstance(stats, Mapping):
        return None
    cost = stats.get("instance_cost", stats.get("total_cost"))
    totals = {
        "input_tokens": _int(stats.get("tokens_sent")),
        "output_tokens": _int(stats.get("tokens_received")),
        "cost_usd": _number(cost),
        "calls": _int(stats.get("api_calls")),
        "source": "SWE-agent info.model_stats",
    }
    if all(totals[k] is None for k in ("input_tokens", "output_tokens", "cost_usd", "calls")):
        return None
    return totals


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return float(value)
    return None


def recorded_totals(metadata: Any) -> RecordedTotals | None:
    """The run's recorded totals in a trace's metadata (``RECORDED_TOTALS``), ``None`` when
    the trace has none. What a display reads: the four figures, and ``counts_tokens``
    (whether they hold token usage at all)."""
    raw = metadata.get(RECORDED_TOTALS) if isinstance(metadata, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    return RecordedTotals(
        _int(raw.get("input_tokens")),
        _int(raw.get("output_tokens")),
        _number(raw.get("cost_usd")),
        _int(raw.get("calls")),
        str(raw.get("source") or "the tool"),
    )
