"""Race an awaitable against a cancel event, so a user's cancel stops a call at once.

Asyncio task cancellation works on its own (``CancelledError`` goes through every await);
the event is for callers that cannot reach the task, such as a UI button.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from core.llm.errors import CallCancelled

T = TypeVar("T")


def raise_if_cancelled(cancel: asyncio.Event | None, *unstarted: Awaitable[object]) -> None:
    """``CallCancelled`` if ``cancel`` is set, closing the coroutines among ``unstarted``
    first (none of them runs, and none is left behind never awaited)."""
    if cancel is None or not cancel.is_set():
        return
    for aw in unstarted:
        if asyncio.iscoroutine(aw):
            aw.close()
    raise CallCancelled("cancelled before the call started")


async def race_cancel(aw: Awaitable[T], cancel: asyncio.Event | None) -> T:
    """Await ``aw``; if ``cancel`` is set first, stop it and raise ``CallCancelled``."""
    if cancel is None:
        return await aw
    raise_if_cancelled(cancel, aw)
    task = asyncio.ensure_future(aw)
    waiter = asyncio.ensure_future(cancel.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
        await asyncio.wait({task, waiter})
    if task in done:
        return task.result()
    if not task.cancelled():
        task.exception()  # finished while being stopped: mark its outcome as seen
    raise CallCancelled("cancelled while waiting for the model")
