"""Model calls against servers that never answer: a trickling one (an SSE comment, or one
space of a plain body, every 0.2 s) and a silent one (no status line at all). Each call must
end with the deadline error within the deadline plus a small margin, streamed and plain.
``python -m bench.stress_llm [CALLS] [DEADLINE_S]``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


async def _one(url: str, deadline: float, stream: bool) -> tuple[float, str]:
    from core.llm import ChatClient, ModelCallError, ModelSettings

    settings = ModelSettings(url, "m", timeout_s=60.0, deadline_s=deadline)
    async with ChatClient(settings) as client:
        started = time.perf_counter()
        try:
            await client.complete([{"role": "user", "content": "hi"}], stream=stream)
        except ModelCallError as exc:
            return time.perf_counter() - started, str(exc.detail)
    return time.perf_counter() - started, "answered"


def run(calls: int = 10, deadline: float = 1.0) -> dict[str, float]:
    from core.llm import EchoBackend, Fault, ModelServer

    worst: dict[str, float] = {}
    with ModelServer(EchoBackend()) as server:
        for name, fault in (("trickle", Fault.trickle(every_s=0.2)), ("silent", Fault.silent())):
            for i in range(calls):
                server.faults.add(fault)
                took, detail = asyncio.run(_one(server.url, deadline, stream=i % 2 == 0))
                if detail != "deadline":
                    raise SystemExit(f"{name} call {i}: ended with {detail!r}, not the deadline")
                worst[name] = max(worst.get(name, 0.0), took)
    return worst


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    deadline = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    worst = run(calls, deadline)
    for name, took in worst.items():
        row = {
            "bench": "stress_llm",
            "figure": f"{name} server: longest call / deadline",
            "value": round(took / deadline, 3),
            "unit": "ratio",
            "goal": "< 1.5",
        }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
