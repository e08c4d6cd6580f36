"""How a demo run is set up, and reading it back from a trace's metadata.

Kept apart from ``core/demo/scenario.py`` (which pulls in the whole runtime) so the GUI can
tell a demo trace from the others at start-up without loading it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.delegation.config import DEFAULT_LIMITS, DelegationLimits


@dataclass(frozen=True)
class DemoOptions:
    steps: int = 200
    """Most model calls of the main agent."""
    window: int = 16_000
    compaction: str = "ctxlens"
    seed: int = 7
    stream: bool = True
    title: str | None = None
    settings: tuple[str, ...] = ()
    """``--set key=value`` overrides of the demo's run config (``RunConfig.with_settings``)."""


@dataclass(frozen=True)
class DelegationDemoOptions:
    """The delegation scenario (``core/demo/delegation.py``): only its limits are settings."""

    settings: tuple[str, ...] = ()
    """``NAME=N`` delegation limits (``DelegationLimits.with_pairs``), as ``--limit``."""

    def limits(self) -> DelegationLimits:
        """The limits; a bad name or value raises an error naming it."""
        return DEFAULT_LIMITS.with_pairs(list(self.settings))


def demo_options(metadata: Any) -> DemoOptions | None:
    """The options a demo trace was created with, or ``None`` for other traces."""
    demo = metadata.get("demo") if isinstance(metadata, dict) else None
    if not isinstance(demo, dict):
        return None
    return DemoOptions(
        steps=int(demo.get("steps", 200)),
        window=int(demo.get("window", 16_000)),
        compaction=str(demo.get("compaction", "ctxlens")),
        seed=int(demo.get("seed", 7)),
        stream=bool(demo.get("stream", True)),
        settings=tuple(str(p) for p in demo.get("settings") or ()),
    )
