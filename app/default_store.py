"""The embedded default store: created on first start from a run of the demo scenario
(CLI-1), so a new user sees a real trace — GoalTree, compaction bands, skills, grants,
a subagent — with no API key and no network.

The window builds it in the background (``build_default_store`` with a progress callback,
``app/gui.py``) so it appears at once; ``ensure_default_store`` is the blocking form for
the self-test and scripts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import CtxlensError

if TYPE_CHECKING:  # SQLAlchemy: `ctxlens gui` asks needs_default_store before its first frame
    from core.store import Store

Progress = Callable[[int], None]
"""Told the number of model calls recorded so far."""


class BuildCancelled(CtxlensError):
    """The window closed while the demo run was being recorded (nothing is kept)."""


def populate(
    store: Store, progress: Progress | None = None, cancel: threading.Event | None = None
) -> None:
    """Fill a brand-new default store with a demo run (the scripted model over HTTP);
    ``cancel`` set ends it at the next run event."""
    import asyncio

    from core.demo.scenario import DemoOptions, run_demo_async
    from core.run.events import EventBus, RunEvent

    events = EventBus()
    calls = [0]

    def count(event: RunEvent) -> None:
        if cancel is not None and cancel.is_set():
            raise BuildCancelled("the demo run was cancelled")
        if event.type == "usage" and progress is not None:
            calls[0] += 1
            progress(calls[0])

    events.subscribe(count)
    asyncio.run(run_demo_async(store, DemoOptions(), events))


def needs_default_store(target: str) -> bool:
    """True when ``target`` is a local store file that does not exist yet."""
    return "://" not in target and not Path(target).exists()


def build_default_store(
    target: str, progress: Progress | None = None, cancel: threading.Event | None = None
) -> str:
    """Record the demo run into ``<target>.creating`` and move it into place (a crash or a
    cancel mid-way leaves no half-built store behind; the next start removes the rest)."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".creating")
    for leftover in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        leftover.unlink(missing_ok=True)
    from core.store import Store

    with Store.open(tmp) as store:
        populate(store, progress, cancel)
        with store.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    tmp.replace(path)  # checkpoint blobs are inside the file (core/store/blobs.py)
    return target


def ensure_default_store(target: str, say: Callable[[str], None] | None = None) -> str:
    """Create ``target`` from a demo run when it is a missing local file (``say`` tells
    the user why this takes a few seconds)."""
    if not needs_default_store(target):
        return target
    if say is not None:
        say("ctxlens: first start: recording the demo run into the default store…")
    return build_default_store(target)
