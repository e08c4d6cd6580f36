"""The demo's entries in ``core/run/rerunners.py``: how a demo trace runs again (its world,
scripted model and user, fixed clock) and the demo world's tool set for ``ctxlens run``.

Everything heavy is imported when a run opens, so registering costs nothing at start-up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.delegation import rerun as delegation_rerun
from core.demo.options import demo_options
from core.run.rerunners import (
    DEMO_TOOLS,
    RerunKit,
    Rerunner,
    Toolset,
    register_rerunner,
    register_toolset,
)

DELEGATION_DEMO = "delegation_demo"
"""``core/demo/delegation.py:DEMO_KEY`` (not imported: that module loads the runtime)."""

if TYPE_CHECKING:
    from core.demo.world import World
    from core.run.events import EventBus
    from core.run.runner import Runner
    from core.store import Store


def demo_toolset(world: World | None = None) -> Toolset:
    """The demo world's tools and slimmers (a fresh world unless given one)."""
    from core.demo.tools import demo_slimmers, demo_tools
    from core.demo.world import World

    return Toolset(demo_tools(world or World()), demo_slimmers())


def demo_kit(metadata: Mapping[str, Any], ticks: int) -> RerunKit:
    """A fresh world of the trace's seed, its tools, the scripted model over that world,
    and the demo's clock after ``ticks`` readings."""
    from core.demo.scenario import demo_clock, make_model
    from core.demo.world import World

    opts = demo_options(metadata)
    world = World(opts.seed) if opts is not None else World()
    return RerunKit(demo_toolset(world), demo_clock(ticks), make_model(world))


def delegation_kit(_metadata: Mapping[str, Any], ticks: int) -> RerunKit:
    """The delegation demo's workspace tool, clock and scripted model (it decides from its
    context alone, so it answers a replay's children and validator too)."""
    from core.demo.delegation import delegation_model
    from core.demo.scenario import demo_clock
    from core.demo.workspace import workspace_tools

    return RerunKit(Toolset(workspace_tools()), demo_clock(ticks), delegation_model())


@dataclass(frozen=True)
class _Script:
    """A demo's run functions and task, from a module that loads the runtime."""

    open_run: Callable[[Store, str, EventBus | None], AbstractAsyncContextManager[Runner]]
    drive: Callable[[Runner], Awaitable[None]]
    user: Callable[[Runner], None]
    task: str


def _demo_script() -> _Script:
    from core.demo.scenario import TASK, constrain_after, drive, open_demo_run

    return _Script(open_demo_run, drive, constrain_after, TASK)


def _delegation_script() -> _Script:
    from core.demo.delegation import TASK, drive, drop_probe_after, open_delegation_run

    return _Script(open_delegation_run, drive, drop_probe_after, TASK)


def _rerunner(
    key: str,
    detail: str,
    kit: Callable[[Mapping[str, Any], int], RerunKit],
    script: Callable[[], _Script],
) -> Rerunner:
    """A re-runner whose run functions are imported (``script``) only when they are
    called, so registering loads nothing."""
    return Rerunner(
        key=key,
        detail=detail,
        kit=kit,
        open_run=lambda store, trace_id, events: script().open_run(store, trace_id, events),
        drive=lambda runner: script().drive(runner),
        user=lambda runner: script().user(runner),
        task=lambda: script().task,
    )


def register() -> None:
    register_rerunner(
        _rerunner("demo", "the demo's scripted model, served on 127.0.0.1", demo_kit, _demo_script)
    )
    register_toolset(DEMO_TOOLS, demo_toolset)
    register_rerunner(
        _rerunner(
            DELEGATION_DEMO,
            "the delegation demo's scripted model, served on 127.0.0.1",
            delegation_kit,
            _delegation_script,
        )
    )
    delegation_rerun.register()
