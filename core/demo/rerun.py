"""The demo's entries in ``core/run/rerunners.py``: how a demo trace runs again (its world,
scripted model and user, fixed clock) and the demo world's tool set for ``ctxlens run``.

Everything heavy is imported when a run opens, so registering costs nothing at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
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


def _open_run(
    store: Store, trace_id: str, events: EventBus | None
) -> AbstractAsyncContextManager[Runner]:
    from core.demo.scenario import open_demo_run

    return open_demo_run(store, trace_id, events)


async def _drive(runner: Runner) -> None:
    from core.demo.scenario import drive

    await drive(runner)


def _user(runner: Runner) -> None:
    from core.demo.scenario import constrain_after

    constrain_after(runner)


def delegation_kit(_metadata: Mapping[str, Any], ticks: int) -> RerunKit:
    """The delegation demo's workspace tool, clock and scripted model (it decides from its
    context alone, so it answers a replay's children and validator too)."""
    from core.demo.delegation import delegation_model
    from core.demo.scenario import demo_clock
    from core.demo.workspace import workspace_tools

    return RerunKit(Toolset(workspace_tools()), demo_clock(ticks), delegation_model())


def _open_delegation(
    store: Store, trace_id: str, events: EventBus | None
) -> AbstractAsyncContextManager[Runner]:
    from core.demo.delegation import open_delegation_run

    return open_delegation_run(store, trace_id, events)


async def _drive_delegation(runner: Runner) -> None:
    from core.demo.delegation import drive

    await drive(runner)


def _delegation_user(runner: Runner) -> None:
    from core.demo.delegation import drop_probe_after

    drop_probe_after(runner)


def _task() -> str:
    from core.demo.scenario import TASK

    return TASK


def _delegation_task() -> str:
    from core.demo.delegation import TASK

    return TASK


def register() -> None:
    register_rerunner(
        Rerunner(
            key="demo",
            detail="the demo's scripted model, served on 127.0.0.1",
            kit=demo_kit,
            open_run=_open_run,
            drive=_drive,
            user=_user,
            task=_task,
        )
    )
    register_toolset(DEMO_TOOLS, demo_toolset)
    register_rerunner(
        Rerunner(
            key=DELEGATION_DEMO,
            detail="the delegation demo's scripted model, served on 127.0.0.1",
            kit=delegation_kit,
            open_run=_open_delegation,
            drive=_drive_delegation,
            user=_delegation_user,
            task=_delegation_task,
        )
    )
    delegation_rerun.register()
