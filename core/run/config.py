"""Settings of one run: window, compaction mode and parameters, injection, limits.

Everything a replay may change (``--set key=value``) is a plain field here, stored with the
trace (``traces.metadata["run_config"]``) so a later process can resume or re-run it.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from core.context.compaction import CompactionConfig, SnipParams
from core.context.compaction.config import GOAL_MODES, GoalMode
from core.context.nudges import DuplicateDetector, StepMonitors, TodoNag, TokenBudget
from core.errors import InvalidInputError
from core.json_text import loads_or
from core.llm.retry import RetryPolicy
from core.refs.budget import ContextBudget
from core.refs.slimming import SlimPolicy

CompactionMode = Literal["ctxlens", "naive", "none"]

DEFAULT_IDENTITY = (
    "You are a careful analysis agent. You plan with the goal tool, work one goal at a "
    "time, cite evidence by its reference id, and never redo work the context shows as done."
)


@dataclass(frozen=True)
class RunConfig:
    model: str = "scripted"
    fallback_model: str | None = None
    window: int = 128_000
    """Context window in tokens (``none`` compaction ignores it: unlimited)."""
    threshold: float = 0.5
    compaction: CompactionMode = "ctxlens"
    goal_mode: GoalMode = "on_overflow"
    snip_max_messages: int = 50
    snip_head_keep: int = 3
    snip_tail_keep: int | None = None
    """Messages snip keeps at the end (default: ``snip_max_messages - snip_head_keep``)."""
    micro_keep_recent: int = 8
    micro_step: int = 1
    """Micro's boundary moves this many results at a time (seed B: one)."""
    aggressive_keep_recent: int = 2
    identity_max_messages: int = 4
    breaker_failures: int = 3
    breaker_reset_s: float = 300.0
    file_cache_entries: int = 100
    file_cache_bytes: int = 25 * 1024 * 1024
    restore_files: int = 5
    restore_chars: int = 4000
    summary_stages: tuple[str, ...] = ("compression",)
    injection_interval: int = 5
    inject_skills: tuple[str, ...] = ()
    skill_recency_threshold: int = 10
    enable_completion_extraction: bool = False
    """After the turn's final answer, a ``reflection`` side branch extracts what the run
    learned (seed A: reflection after a completed task; needs a summarizer)."""
    continue_unfinished: bool = True
    """A text reply continues the turn while goals are open or the reply was cut off
    (seed B's continuations; diminishing returns stops them)."""
    max_steps: int = 400
    """Model calls per turn before the run is forced to answer without tools."""
    soft_limit: int = 32_000
    hard_limit: int = 40_000
    nudge_near_ratio: float = 0.8
    todo_nag_steps: int = 3
    duplicate_limit: int = 3
    escalation_limit: int = 64_000
    """The recovery ladder's EscalateTokens: hard limit and request ``max_tokens``."""
    max_output_tokens: int | None = None
    """``max_tokens`` every request carries (``None``: the provider's default)."""
    retry_base_ms: float = 500.0
    retry_cap_ms: float = 32_000.0
    retry_max_tries: int = 10
    retry_fallback_after: int = 3
    grant_max_tokens: int | None = None
    """The context budget of grants per round (``None``: the window)."""
    grant_max_tool_calls: int = 20
    grant_max_output_bytes: int = 131_072
    grant_max_images: int = 8
    tool_timeout_s: float = 120.0
    slim_max_tokens: int = 1_000
    slim_max_bytes: int = 16_384
    """A tool output over either limit is slimmed into a ref (the full text stays
    readable with ``read_ref``)."""
    system_prompt: str | None = None
    preset_prompt: str | None = None
    """A preset's identity (INJ-1: given system message > ``system_prompt`` > preset >
    ``identity``)."""
    prompt_skills: tuple[str, ...] | None = None
    """Skills the system prompt lists (a preset or call site narrows them; ``None``: all)."""
    identity: str = DEFAULT_IDENTITY
    stream: bool = True
    subagent_max_steps: int = 8
    checkpoints: bool = True
    checkpoint_rounds: int = 1
    """Also write a small "round" checkpoint (runtime state, no task state) every N rounds
    of the main agent, so a killed run resumes from a recent one (0 = off)."""
    trajectory_dir: str | None = None
    memory_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def compaction_config(self) -> CompactionConfig:
        from core.context.compaction import MicroParams, SummaryParams
        from core.context.compaction.config import FileParams, GuardParams, IdentityParams

        tail = self.snip_tail_keep
        tail = tail if tail is not None else self.snip_max_messages - self.snip_head_keep
        return CompactionConfig(
            window=self.window,
            threshold=self.threshold,
            goal_mode=self.goal_mode,
            snip=SnipParams(
                max_messages=self.snip_max_messages,
                head_keep=self.snip_head_keep,
                tail_keep=tail
                if tail is not None
                else self.snip_max_messages - self.snip_head_keep,
            ),
            micro=MicroParams(keep_recent=self.micro_keep_recent, step=self.micro_step),
            aggressive=MicroParams(keep_recent=self.aggressive_keep_recent, step=1),
            summary=SummaryParams(stages=self.summary_stages),
            identity=IdentityParams(max_messages=self.identity_max_messages),
            files=FileParams(
                max_entries=self.file_cache_entries,
                max_bytes=self.file_cache_bytes,
                restore_files=self.restore_files,
                restore_chars=self.restore_chars,
            ),
            guards=GuardParams(
                failures_to_open=self.breaker_failures, half_open_after_s=self.breaker_reset_s
            ),
        )

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_tries=self.retry_max_tries,
            base_ms=self.retry_base_ms,
            cap_ms=self.retry_cap_ms,
            fallback_after=self.retry_fallback_after,
        )

    def grant_budget(self) -> ContextBudget:
        return ContextBudget(
            max_tokens=self.grant_max_tokens or self.window,
            max_tool_calls=self.grant_max_tool_calls,
            max_output_bytes=self.grant_max_output_bytes,
            max_image_blocks=self.grant_max_images,
        )

    def slim_policy(self) -> SlimPolicy:
        return SlimPolicy(max_tokens=self.slim_max_tokens, max_bytes=self.slim_max_bytes)

    def monitors(self) -> StepMonitors:
        return StepMonitors(
            budget=TokenBudget(self.soft_limit, self.hard_limit, self.nudge_near_ratio),
            todo=TodoNag(after=self.todo_nag_steps),
            duplicates=DuplicateDetector(threshold=self.duplicate_limit),
        )

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> RunConfig:
        known = {f.name for f in dataclasses.fields(RunConfig)}
        values = {k: v for k, v in data.items() if k in known}
        for key in _TUPLES:
            if key in values and isinstance(values[key], list):
                values[key] = tuple(values[key])
        return RunConfig(**values)

    def with_settings(self, pairs: list[str]) -> RunConfig:
        """Apply ``key=value`` overrides (values parsed as JSON when they parse). An unknown
        key or a value of the wrong type is an error naming the key."""
        fields = {f.name: f for f in dataclasses.fields(RunConfig)}
        changes: dict[str, Any] = {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            key = key.strip().replace("-", "_")
            if not sep:
                raise InvalidInputError(f"--set {pair!r}: expected key=value")
            if key not in fields or key == "extra":
                raise InvalidInputError(unknown_setting(key))
            value: Any = loads_or(raw, raw)
            if key in _TUPLES and value is not None:
                value = tuple(value if isinstance(value, list) else str(value).split(","))
            changes[key] = _checked(key, getattr(self, key), value)
        return dataclasses.replace(self, **changes)


def setting_names() -> list[str]:
    return [f.name for f in dataclasses.fields(RunConfig) if f.name != "extra"]


def unknown_setting(key: str) -> str:
    near = difflib.get_close_matches(key, setting_names(), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return f"--set {key}: unknown setting {key!r}{hint} (`ctxlens run --help` lists them all)"


def settings_help() -> str:
    """Every setting with its default, from the dataclass (so the help cannot drift)."""
    default = RunConfig()
    return "\n".join(f"  {name}={json.dumps(getattr(default, name))}" for name in setting_names())


def _checked(key: str, default: Any, value: Any) -> Any:
    """The value, if it has the default's type (ints for floats are fine; ``None`` fields
    take any value)."""
    if default is None or (value is None and key in _OPTIONAL):
        return value
    ok = isinstance(value, type(default)) and not (
        isinstance(value, bool) and not isinstance(default, bool)
    )
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not ok:
        kind = type(default).__name__
        raise InvalidInputError(f"--set {key}={value!r}: expected {kind} (default {default!r})")
    if key in _CHOICES and value not in _CHOICES[key]:
        raise InvalidInputError(f"--set {key}={value!r}: expected one of {_CHOICES[key]}")
    return value


_TUPLES = tuple(f.name for f in dataclasses.fields(RunConfig) if str(f.type).startswith("tuple"))
"""Settings a list or a comma-separated value sets (JSON has no tuples): the tuple fields."""

_CHOICES: dict[str, tuple[str, ...]] = {
    "compaction": get_args(CompactionMode),
    "goal_mode": GOAL_MODES,
}


_OPTIONAL = frozenset(f.name for f in dataclasses.fields(RunConfig) if "None" in str(f.type))
