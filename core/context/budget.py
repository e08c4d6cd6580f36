"""The limits a context is drawn against: window, soft and hard budget, compaction threshold.

A ctxlens run: values from trace metadata (``metadata["budget"]``) when the run recorded
them, else the defaults of the seeds (B 2.1: soft 32,000 / hard 40,000 tokens; CMP-4:
threshold 0.5 × the context window). An imported trace gets none of those: only its window
(``core/context/window.py``, possibly unknown) and the limits the tool itself had (Claude
Code's auto-compact point, as its compaction markers recorded it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.context.window import imported_window, is_imported

DEFAULT_WINDOW = 128_000
DEFAULT_SOFT = 32_000
DEFAULT_HARD = 40_000
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Budget:
    window: int | None = DEFAULT_WINDOW
    soft: int | None = DEFAULT_SOFT
    hard: int | None = DEFAULT_HARD
    threshold_ratio: float | None = DEFAULT_THRESHOLD
    source: str = "defaults"
    """``trace`` when read from trace metadata, ``defaults`` otherwise, ``imported`` for
    another tool's trace (no runtime limits)."""
    window_source: str = "config"
    """Where ``window`` comes from: ``trace``, ``model-table``, ``config`` or ``unknown``."""
    window_detail: str = ""
    auto_compact: int | None = None
    """The tokens at which the tool compacted on its own (recorded, imported traces)."""

    @property
    def threshold(self) -> int | None:
        if self.window is None or self.threshold_ratio is None:
            return None
        return int(self.window * self.threshold_ratio)

    def markers(self) -> list[tuple[str, int]]:
        """Named limits in ascending order, for drawing against a token bar."""
        marks = [
            ("compaction threshold", self.threshold),
            ("auto-compact point", self.auto_compact),
            ("soft budget", self.soft),
            ("hard budget", self.hard),
            ("window", self.window),
        ]
        return sorted(((n, v) for n, v in marks if v is not None), key=lambda m: m[1])

    def status(self, tokens: int) -> str:
        """``ok``, ``near soft`` (≥ 80 % of soft), ``over soft`` or ``over hard``; without
        budgets (an import): against the window, or ``window unknown``."""
        if self.soft is None or self.hard is None:
            return self._window_status(tokens)
        if tokens >= self.hard:
            return "over hard"
        if tokens >= self.soft:
            return "over soft"
        if tokens >= 0.8 * self.soft:
            return "near soft"
        return "ok"

    def _window_status(self, tokens: int) -> str:
        if self.window is None:
            return "window unknown"
        if tokens > self.window:
            return "over window"
        return "near window" if tokens >= 0.8 * self.window else "ok"

    def window_text(self) -> str:
        """``200,000 (model table)``, ``unknown``: the window as a person reads it."""
        if self.window is None:
            return "unknown"
        return f"{self.window:,} ({self.window_source.replace('-', ' ')})"

    def window_share_text(self) -> str:
        """``the 200,000-token window (model table)``: what a share is of, without nesting
        one parenthesis in another ("39% of 200,000 (model table) window")."""
        if self.window is None:
            return "an unknown window"
        return f"the {self.window:,}-token window ({self.window_source.replace('-', ' ')})"


def budget_of(source: str, metadata: Any) -> Budget:
    """The limits of a trace: a run's (recorded or defaults), or an import's own."""
    if not is_imported(source):
        return budget_from_metadata(metadata)
    w = imported_window(metadata)
    limits = metadata.get("limits") if isinstance(metadata, dict) else None
    auto = limits.get("auto_compact_tokens") if isinstance(limits, dict) else None
    return Budget(
        window=w.tokens,
        soft=None,
        hard=None,
        threshold_ratio=None,
        source="imported",
        window_source=w.source,
        window_detail=w.detail,
        auto_compact=int(auto) if isinstance(auto, int) and auto > 0 else None,
    )


def budget_from_metadata(metadata: Any) -> Budget:
    meta = metadata.get("budget") if isinstance(metadata, dict) else None
    if not isinstance(meta, dict):
        return Budget()
    window = _int(meta.get("context_window", meta.get("window")), DEFAULT_WINDOW)
    ratio = meta.get("compaction_threshold", DEFAULT_THRESHOLD)
    return Budget(
        window=window,
        soft=_int(meta.get("soft"), DEFAULT_SOFT),
        hard=_int(meta.get("hard"), DEFAULT_HARD),
        threshold_ratio=float(ratio) if isinstance(ratio, (int, float)) else DEFAULT_THRESHOLD,
        source="trace",
    )


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, (int, float)) and value > 0 else default
