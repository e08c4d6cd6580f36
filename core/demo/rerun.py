"""The demo's entries in ``core/run/rerunners.py``: how a demo trace runs again (its world,
scripted model and user, fixed clock) and the demo world's tool set for ``ctxlens run``.

Everything heavy is imported when a run opens, so registering costs nothing at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from core.demo.options import demo_options
from core.run.rerunners import (
    DEMO_TOOLS,
    RerunKit,
    Rerunner,
    Toolset,
    register_rerunner,
    register_toolset,
)

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


def register() -> None:
    register_rerunner(
        Rerunner(
            key="demo",
            detail="the demo's scripted model, served on 127.0.0.1",
            kit=demo_kit,
            open_run=_open_run,
            drive=_drive,
            user=_user,
        )
    )
    register_toolset(DEMO_TOOLS, demo_toolset)
