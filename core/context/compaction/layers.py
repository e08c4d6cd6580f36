"""The layer registry (issue 19): each level's name → a plain function over the view, the
records and the config, and its help text written from its parameters' values.

The compactor dispatches through ``LAYERS`` (no chain of string comparisons), and the help
the UI and the CLI show is built from ``CompactionConfig``'s defaults, so it cannot state a
number the code does not use. ``summary`` needs the summarizer (a model call): its entry
has no ``apply``, and the compactor runs it itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.context.compaction.config import LEVELS, CompactionConfig
from core.context.compaction.goal import compact_goals
from core.context.compaction.identity import inject_identity
from core.context.compaction.items import with_items
from core.context.compaction.micro import micro
from core.context.compaction.result import LayerResult
from core.context.compaction.scan import ContextState
from core.context.compaction.snip import snip
from core.context.compaction.summary_state import Records
from core.context.view import View

Apply = Callable[[View, Records, CompactionConfig, ContextState | None], tuple[LayerResult, ...]]


@dataclass(frozen=True)
class Layer:
    name: str
    apply: Apply | None
    """The transform (its results in the order they apply); ``None``: the summary."""
    help: Callable[[CompactionConfig], str]

    def describe(self, config: CompactionConfig | None = None) -> str:
        return self.help(config or CompactionConfig())


def _goal(v: View, r: Records, c: CompactionConfig, s: ContextState | None) -> tuple[LayerResult]:
    return (compact_goals(v, r, state=s),)


def _snip(v: View, r: Records, c: CompactionConfig, s: ContextState | None) -> tuple[LayerResult]:
    return (snip(v, r, c.snip, s),)


def _micro(v: View, r: Records, c: CompactionConfig, s: ContextState | None) -> tuple[LayerResult]:
    return (micro(v, c.micro, state=s),)


def _aggressive(
    v: View, r: Records, c: CompactionConfig, s: ContextState | None
) -> tuple[LayerResult, LayerResult]:
    """Seed B: snip, then micro keeping only the most recent results."""
    first = snip(v, r, c.snip, s)
    after = with_items(v, first.items) if first.changed else v
    return first, micro(after, c.aggressive, "aggressive", s)


def _identity(
    v: View, r: Records, c: CompactionConfig, s: ContextState | None
) -> tuple[LayerResult]:
    return (inject_identity(v, c.identity),)


def _recent(n: int) -> str:
    """Which tool results stay, in words."""
    return "the most recent result stays" if n == 1 else f"the {n} most recent results stay"


LAYERS: dict[str, Layer] = {
    "goal": Layer(
        "goal",
        _goal,
        lambda c: (
            "Goal compaction: completed or abandoned goals keep only their goal calls; "
            f"the done result becomes a 'details cleared' marker (inside auto: {c.goal_mode})."
        ),
    ),
    "snip": Layer(
        "snip",
        _snip,
        lambda c: (
            f"Snip: over {c.snip.max_messages} messages, keep the first "
            f"{c.snip.head_keep} and at most {c.snip.tail_keep} recent messages with a "
            f"placeholder in between (cut in steps of {c.snip.step})."
        ),
    ),
    "micro": Layer(
        "micro",
        _micro,
        lambda c: (
            "Micro: old tool results become '[Previous: used <tool>]'; "
            f"{_recent(c.micro.keep_recent)} (the boundary moves {c.micro.step} at a time)."
        ),
    ),
    "summary": Layer(
        "summary",
        None,
        lambda c: (
            "Summary: system prompt + first user message + a summary that carries "
            "goal, steps, refs, constraints, pending items and failures "
            f"(narrative ≤ {c.summary.max_narrative_tokens} tokens)."
        ),
    ),
    "aggressive": Layer(
        "aggressive",
        _aggressive,
        lambda c: (
            f"Aggressive micro: snip, then micro where only {_recent(c.aggressive.keep_recent)}."
        ),
    ),
    "identity": Layer(
        "identity",
        _identity,
        lambda c: (
            "Identity: re-inject an identity block when "
            f"{c.identity.max_messages} or fewer messages remain."
        ),
    ),
}
assert tuple(LAYERS) == LEVELS, "the registry lists the levels in auto's order"


def level_help(config: CompactionConfig | None = None) -> dict[str, str]:
    """Help of every level and of ``auto``, from ``config`` (default: the defaults)."""
    cfg = config or CompactionConfig()
    out = {name: layer.describe(cfg) for name, layer in LAYERS.items()}
    order = ", ".join(name for name in LEVELS if name != "identity")
    out["auto"] = (
        f"Auto: {order} in order until the context is under {cfg.threshold:g} × the window, "
        "then identity."
    )
    return out
