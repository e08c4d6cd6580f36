"""Time for the retry loop, injectable so tests wait on a fake clock, not on the wall
(``tests/fake_clock.py:FakeClock`` advances its own time and records every wait)."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    """Monotonic time and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
