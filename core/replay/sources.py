"""What a trace needs to run again: its tools, slimmers, wall clock and (if there is one)
an offline model that decides from its context alone.

- a trace of a source with a re-runner (``core/run/rerunners.py``; the demo's,
  ``metadata["demo"]``): that source's kit — the demo world's tools, re-executed for real
  (the world is deterministic), its slimmers, its fixed clock, and the scripted model as
  oracle and live model;
- a ``ctxlens run`` trace offered a registered tool set (``metadata["run"]["demo_tools"]``):
  the same tools, no oracle (its model was a real endpoint);
- anything else (an imported session, a run against other tools): tools that answer with
  the recorded results (``core/replay/tools.py``), the real clock, no oracle.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.llm import ChatBackend
from core.refs import SlimmerRegistry
from core.replay.recording import Recording
from core.replay.refmap import RefRenamer
from core.replay.tools import recorded_tools
from core.run.rerunners import offered_tools, rerunner_for, rerunner_keys, toolset
from core.run.runner import INTRINSIC
from core.run.tools import ToolRegistry


def carried_keys() -> tuple[str, ...]:
    """Metadata keys a replay carries over from its source, so a replay can be replayed:
    the re-runners' keys (``demo``) and the run record (``run``)."""
    return (*rerunner_keys(), "run")


@dataclass(frozen=True)
class SourceKit:
    kind: str
    """The re-runner's key (``demo``) | run | recorded."""
    tools: ToolRegistry
    slimmers: SlimmerRegistry | None
    clock: Callable[[], float]
    oracle: ChatBackend | None = None
    """An offline model that decides from its context (judge and live continuation)."""


def kit_for(
    metadata: Mapping[str, Any] | None,
    recording: Recording,
    renamer: RefRenamer,
    clock_ticks: int = 0,
) -> SourceKit:
    rerunner = rerunner_for(metadata)
    if rerunner is not None:
        kit = rerunner.kit(metadata or {}, clock_ticks)
        tools = kit.toolset
        return SourceKit(rerunner.key, tools.tools, tools.slimmers, kit.clock, kit.model)
    offered = toolset(offered_tools(metadata))
    if offered is not None:
        return SourceKit("run", offered.tools, offered.slimmers, time.time)
    recorded = recorded_tools(recording, renamer, skip=INTRINSIC)
    return SourceKit("recorded", recorded, None, time.time)
