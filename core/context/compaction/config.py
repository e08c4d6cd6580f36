"""Compaction parameters. Defaults are the seeds' numbers (A for goal compaction and the
summary, B for the layers, guards and file cache); every one is configurable."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeGuard, get_args

GoalMode = Literal["none", "on_complete", "on_overflow"]
GOAL_MODES: tuple[GoalMode, ...] = get_args(GoalMode)
#: Levels and layers, in the order ``auto`` applies them.
Level = Literal["goal", "snip", "micro", "summary", "aggressive", "identity"]
LEVELS: tuple[Level, ...] = get_args(Level)
LevelChoice = Literal[Level, "auto"]
"""What a manual compaction may ask for: one level or layer, or ``auto`` (all, in order)."""
ALL_LEVELS: tuple[LevelChoice, ...] = get_args(LevelChoice)
Trigger = Literal["auto", "manual", "on_complete"]
"""Why the runtime compacted: over the threshold, asked for, or a goal was completed
(``goal_mode=on_complete``). Imported compactions keep their tool's own word."""


def is_level_choice(level: str) -> TypeGuard[LevelChoice]:
    return level in ALL_LEVELS


def is_goal_mode(mode: str) -> TypeGuard[GoalMode]:
    return mode in GOAL_MODES


@dataclass(frozen=True)
class SnipParams:
    max_messages: int = 50
    head_keep: int = 3
    tail_keep: int = 47
    max_refs: int = 200
    """Refs the placeholder carries (the most recent ones)."""
    step: int = 10
    """Cut in steps: remove a multiple of ``step`` messages, so the next ``step - 1``
    contexts are plain appends and the provider's prompt cache keeps hitting."""


@dataclass(frozen=True)
class MicroParams:
    keep_recent: int = 8
    step: int = 8
    """The boundary moves ``step`` results at a time, not one per call."""
    exempt_tools: tuple[str, ...] = ("goal",)


@dataclass(frozen=True)
class SummaryParams:
    stages: tuple[str, ...] = ("compression",)
    """Side-branch queue; e.g. ``("reflection", "compression")`` or
    ``("knowledge_eval", "compression")``. ``compression`` must come last."""
    max_narrative_tokens: int = 1200
    max_refs: int = 40


@dataclass(frozen=True)
class IdentityParams:
    max_messages: int = 4
    text: str | None = None
    """The identity block; default: the first paragraph of the system prompt."""


@dataclass(frozen=True)
class FileParams:
    max_entries: int = 100
    max_bytes: int = 25 * 1024 * 1024
    restore_files: int = 5
    restore_chars: int = 4000
    read_tools: tuple[str, ...] = ("read_file", "read", "view", "open_file", "cat")


@dataclass(frozen=True)
class GuardParams:
    failures_to_open: int = 3
    half_open_after_s: float = 300.0
    min_reclaim: float = 0.10
    """An automatic compaction that reclaims less than this share of tokens is refused."""
    target: float = 0.75
    """An automatic compaction keeps going until the context is at most ``target × limit``:
    headroom below the threshold, so the next compaction (which breaks the provider's
    prompt cache) is many calls away rather than the next call."""


@dataclass(frozen=True)
class CompactionConfig:
    window: int = 128_000
    threshold: float = 0.5
    """Compact when the context exceeds ``threshold × window`` tokens."""
    goal_mode: GoalMode = "on_overflow"
    snip: SnipParams = field(default_factory=SnipParams)
    micro: MicroParams = field(default_factory=MicroParams)
    aggressive: MicroParams = field(default_factory=lambda: MicroParams(keep_recent=2, step=1))
    summary: SummaryParams = field(default_factory=SummaryParams)
    identity: IdentityParams = field(default_factory=IdentityParams)
    files: FileParams = field(default_factory=FileParams)
    guards: GuardParams = field(default_factory=GuardParams)

    @property
    def limit(self) -> int:
        return int(self.window * self.threshold)
