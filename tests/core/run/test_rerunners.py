"""The re-runner registry (``core/run/rerunners.py``): the live runner and replay find a
source's way to run its traces by the trace's metadata, and neither loads the demo."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from core.llm import ChatClient, EchoBackend, ModelServer
from core.replay.recording import Recording
from core.replay.refmap import RefRenamer
from core.replay.sources import carried_keys, kit_for
from core.run import rerunners
from core.run.config import RunConfig
from core.run.events import EventBus
from core.run.live import live_support, open_live_run
from core.run.rerunners import RerunKit, Rerunner, Toolset, rerunner_for, toolset
from core.run.runner import Runner
from core.run.tools import ToolRegistry
from core.store import Store

ROOT = Path(__file__).resolve().parents[3]


def _toy_kit(metadata: Mapping[str, Any], ticks: int) -> RerunKit:
    start = float(metadata["toy"]["t0"]) + ticks
    return RerunKit(Toolset(ToolRegistry()), lambda: start, EchoBackend())


@asynccontextmanager
async def _toy_run(store: Store, trace_id: str, events: EventBus | None) -> AsyncIterator[Runner]:
    with ModelServer(EchoBackend()) as server:
        async with ChatClient(server.settings(model="echo", stream=False)) as client:
            yield Runner(store, trace_id, client, RunConfig(model="echo"), events=events)


async def _drive(runner: Runner) -> None:
    await runner.start_turn("toy task")
    await runner.run()


TOY = Rerunner("toy", "the toy's echo model", _toy_kit, _toy_run, _drive, lambda runner: None)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Rerunner:
    monkeypatch.setitem(rerunners._RERUNNERS, "toy", TOY)
    return TOY


def test_a_registered_source_runs_live_through_its_own_rerunner(
    store: Store, toy: Rerunner
) -> None:
    import asyncio

    trace = store.create_trace("toy", source="toy", metadata={"toy": {"t0": 5}})
    support = live_support(trace, env={})
    assert support.runnable and support.detail == "the toy's echo model"
    assert rerunner_for({"toy": "not an object"}) is None

    async def go() -> str | None:
        async with open_live_run(store, trace.id, env={}) as runner:
            await toy.drive(runner)
            return runner.final

    assert asyncio.run(go()) == "echo: toy task"  # the echo model answered the toy task


def test_replay_takes_the_sources_kit_and_carries_its_key(store: Store, toy: Rerunner) -> None:
    trace = store.create_trace("toy", source="toy", metadata={"toy": {"t0": 100}})
    with store.read() as r:
        kit = kit_for(trace.metadata, Recording.load(r, trace.id), RefRenamer(), clock_ticks=3)
    assert kit.kind == "toy" and isinstance(kit.oracle, EchoBackend)
    assert kit.clock() == 103.0
    assert "toy" in carried_keys() and "run" in carried_keys()

    unknown = store.create_trace("other", source="other", metadata={"elsewhere": {}})
    assert live_support(unknown, env={}).kind == "foreign"
    with store.read() as r:
        assert kit_for(unknown.metadata, Recording.load(r, unknown.id), RefRenamer()).kind == (
            "recorded"
        )


def test_toolsets_are_found_by_name_only_when_registered() -> None:
    assert toolset(None) is None and toolset("no such tools") is None
    assert toolset(7) is None


def _fresh_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_run_and_replay_do_not_load_the_demo_and_the_cli_registers_it() -> None:
    loaded = _fresh_python(
        "import sys, core.run.live, core.replay.rerun, core.replay.resume;"
        "print('core.demo' in sys.modules)"
    )
    assert loaded == "False"
    # a command that may run a trace again registers them as it starts (``ctxlens context``
    # here, on a store without that trace: exit 2); ``ctxlens traces`` starts without them
    keys = _fresh_python(
        "import sys, tempfile, contextlib, io, app.cli;"
        "from core.run.rerunners import rerunner_keys, toolset, runner_kind;"
        "from core.store import Store;"
        "db = tempfile.mkdtemp() + '/s.db'; Store.open(db).close();"
        "quiet = contextlib.redirect_stderr(io.StringIO());"
        "quiet.__enter__();"
        "listed = app.cli.main(['--db', db, 'traces'], out=io.StringIO());"
        "before = rerunner_keys();"
        "code = app.cli.main(['--db', db, 'context', 'nope'], out=io.StringIO());"
        "print(listed, before, code, rerunner_keys(), toolset('demo') is not None,"
        " runner_kind({'delegation': {}}).key, 'core.delegation.runner' in sys.modules)"
    )
    assert keys == "0 () 2 ('demo', 'delegation_demo') True delegation False"  # not loaded
