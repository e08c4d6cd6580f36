"""The limits a context is drawn against: window, soft and hard budget, compaction threshold.

A ctxlens run: values from trace metadata (``metadata["budget"]``) when the run recorded
them, else the defaults of the seeds (B 2.1: soft 32,000 / hard 40,000 tokens; CMP-4:
threshold 0.5 × the context window). An imported trace gets none of those: only its window
(``core/context/window.py``, possibly unknown) and the limits the tool itself had (Claude
Code's auto-compact point, as its compaction markers recorded it).

The auto-compact point is observed, not configured: it is the context size at which the tool
compacted (``compactMetadata.preTokens``), so the tool's own threshold is at or below it.
It is drawn and listed as "auto-compact fired at", and what is left before it is an upper
bound ("≤ 335 left"): ``Budget.limits_left``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.context.window import imported_window, is_imported

DEFAULT_WINDOW = 128_000
DEFAULT_SOFT = 32_000
DEFAULT_HARD = 40_000
DEFAULT_THRESHOLD = 0.5

OBSERVED_LIMITS = {"auto-compact point": "auto-compact fired at"}
"""Limits seen where they took effect (marker name → how it is drawn and listed): the real
threshold is at or below the value."""
LATER_LABELS = {"auto-compact point": "auto-compact fired later, at"}
"""How an observed limit is drawn and listed at a step before it took effect (the call a
playback shows, ``context --call N``): the value is the trace's, seen only later."""


def limit_label(name: str) -> str:
    """A limit as drawn and listed ("auto-compact fired at" for the observed one)."""
    return OBSERVED_LIMITS.get(name, name)


@dataclass(frozen=True)
class LimitLeft:
    """One limit against a prompt: what is left before it, or how far over it."""

    name: str
    """The marker's name (``Budget.markers``; the key of ``context --json``'s ``limits``)."""
    label: str
    tokens: int
    observed: bool
    """An observed limit: the real one is at or below ``tokens``, so ``left`` is an upper
    bound (and "over" a lower bound)."""
    left: int
    """``tokens`` minus the prompt (negative: over)."""
    estimated: bool = False
    """The prompt is an estimate (the next call of an import), so ``left`` is one too."""

    @property
    def left_text(self) -> str:
        """``57,097 left`` / ``1,200 over``; for an observed limit ``≤ 335 left`` /
        ``≥ 1,200 over``; against an estimated prompt ``≈178,308 left``."""
        n = f"{'≈' if self.estimated else ''}{abs(self.left):,}"
        if self.left >= 0:
            return f"{'≤ ' if self.observed else ''}{n} left"
        return f"{'≥ ' if self.observed else ''}{n} over"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "tokens": self.tokens,
            "observed": self.observed,
            "left": self.left,
            "left_bound": "at_most" if self.observed else "exact",
            "estimated": self.estimated,
        }


DEFAULT_LIMITS_TEXT = "limits: defaults, the trace recorded none"


@dataclass(frozen=True)
class Budget:
    window: int | None = DEFAULT_WINDOW
    soft: int | None = DEFAULT_SOFT
    hard: int | None = DEFAULT_HARD
    threshold_ratio: float | None = DEFAULT_THRESHOLD
    source: str = "defaults"
    """``trace`` when read from trace metadata, ``defaults`` otherwise, ``imported`` for
    another tool's trace (no runtime limits)."""
    window_source: str = "defaults"
    """Where ``window`` comes from: ``trace``, ``model-table``, ``config`` (a run's, recorded
    in its trace), ``defaults`` (ctxlens's, for a run that recorded none) or ``unknown``."""
    window_detail: str = ""
    auto_compact: int | None = None
    """The tokens at which the tool compacted on its own (recorded, imported traces)."""
    auto_compact_later: bool = False
    """Shown as of a step before the tool's first compaction of its own (``as_of``): the
    auto-compact point is labelled "fired later, at", not "fired at"."""

    def as_of(self, auto_compacted: bool) -> Budget:
        """This budget as of a step: ``auto_compacted``, whether the tool had compacted on
        its own by then (a boundary with trigger ``auto`` on the step's path)."""
        later = self.auto_compact is not None and not auto_compacted
        return self if later == self.auto_compact_later else replace(self, auto_compact_later=later)

    def label(self, name: str) -> str:
        """A marker as drawn and listed (``limit_label``; "auto-compact fired later, at"
        before the tool's compaction fired)."""
        if self.auto_compact_later and name in LATER_LABELS:
            return LATER_LABELS[name]
        return limit_label(name)

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

    def limits_left(self, prompt: int, estimated: bool = False) -> list[LimitLeft]:
        """Every limit against ``prompt`` (the Budget pane's rows, ``context --json``'s
        ``limits_detail``); ``estimated``: the prompt is an estimate."""
        return [
            LimitLeft(
                name, self.label(name), value, name in OBSERVED_LIMITS, value - prompt, estimated
            )
            for name, value in self.markers()
        ]

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

    def limits_text(self) -> str:
        """Where the limits come from, in words (the Budget pane's line): another tool's
        trace (imported, or recorded by the proxy) has its window and no runtime budgets;
        a ctxlens trace, the budget it recorded or the defaults."""
        if self.source == "imported":  # an unknown window is already the status beside this
            window = f"window {self.window_text()}; " if self.window is not None else ""
            return f"{window}no runtime budgets on another tool's trace"
        if self.source == "defaults":
            return DEFAULT_LIMITS_TEXT
        return "limits from the trace"

    def limits_note(self) -> str:
        """``limits_text`` where the words beside the window do not say it already (the
        Context pane's summary): the defaults, whose window reads "(defaults)" with it."""
        return DEFAULT_LIMITS_TEXT if self.source == "defaults" else ""

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
        window_source="config",
    )


def _int(value: Any, default: int) -> int:
    return int(value) if isinstance(value, (int, float)) and value > 0 else default
