"""Token totals a trace records for its whole run, where it records no per-call usage.

SWE-agent's ``info.model_stats`` keeps only run totals (``tokens_sent``,
``tokens_received``, ``api_calls``): its calls carry no usage, so a sum over calls cannot be
told from the record, but the run's totals can — shown as the trace's recorded totals,
never as a sum of calls. A replayed SWE-agent run (its "replay" model counts nothing)
records ``0`` tokens over its calls; that is "not recorded", not zero tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.fields_json import FieldsJson


@dataclass(frozen=True)
class RunTotals(FieldsJson):
    input_tokens: int | None
    output_tokens: int | None
    calls: int | None
    source: str
    """Where the trace records them (``SWE-agent model_stats``)."""

    @property
    def text(self) -> str:
        """``122,612 in / 1,369 out over 12 calls (SWE-agent model_stats)``."""
        inp = f"{self.input_tokens:,}" if self.input_tokens is not None else "—"
        out = f"{self.output_tokens:,}" if self.output_tokens is not None else "—"
        calls = f" over {self.calls:,} call{'s' if self.calls != 1 else ''}" if self.calls else ""
        return f"{inp} in / {out} out{calls} ({self.source})"


def recorded_run_totals(metadata: Any) -> RunTotals | None:
    """The run totals the trace's metadata records (``None``: none, or only zeros over
    calls that must have sent tokens)."""
    meta = metadata if isinstance(metadata, dict) else {}
    info = meta.get("info") if isinstance(meta.get("info"), dict) else {}
    stats = info.get("model_stats") if isinstance(info, dict) else None
    if not isinstance(stats, dict):
        return None
    sent, received = _count(stats.get("tokens_sent")), _count(stats.get("tokens_received"))
    calls = _count(stats.get("api_calls"))
    if not sent:  # nothing sent over its calls: the model counted nothing (a replay)
        return None
    return RunTotals(sent, received, calls, "SWE-agent model_stats")


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and value >= 0 else None
