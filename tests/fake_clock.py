"""A clock for the retry loop whose ``sleep`` only moves its own time forward, so a test
asserts the exact backoff schedule and a bounded total without sleeping."""

from __future__ import annotations

import asyncio


class FakeClock:
    """A clock whose ``sleep`` only moves its own time forward (and yields once)."""

    def __init__(self, start: float = 0.0) -> None:
        self.time = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds
        await asyncio.sleep(0)

    @property
    def slept(self) -> float:
        return sum(self.sleeps)
