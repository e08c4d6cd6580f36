"""A delegation demo run stopped part-way, as a process that went away leaves it: the
starting point of the resume, replay and Step tests of delegation trees."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.demo.delegation import TASK, create_delegation_trace, open_delegation_run
from core.store import Store


def stopped_after(db: Path, steps: int) -> str:
    """The root trace id of a delegation demo run stopped after ``steps`` steps."""

    async def go() -> str:
        with Store.open(db) as store:
            trace_id = create_delegation_trace(store)
            async with open_delegation_run(store, trace_id) as runner:
                await runner.start_turn(TASK)
                for _ in range(steps):
                    await runner.step()
            return trace_id

    return asyncio.run(go())
