"""How to run a trace of a given source again, looked up by its source.

The live runner (``core/run/live.py``), replay (``core/replay/sources.py``) and resume
(``core/replay/resume.py``) continue or re-run stored traces without knowing which sources
exist. A source whose traces can run again offline registers a ``Rerunner`` under the
metadata key its traces carry (the demo: ``metadata["demo"]``, registered by
``core/demo/__init__.py``); a tool set a ``ctxlens run`` can be offered registers under the
name its run config records (``RunConfig.extra["tools"]``). A new source is one
registration; the layers contract (``pyproject.toml``) keeps ``run`` and ``replay`` from
importing the demo.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from core.llm import ChatBackend
    from core.refs import SlimmerRegistry
    from core.run.events import EventBus
    from core.run.runner import Runner
    from core.run.tools import ToolRegistry
    from core.store import Store

T = TypeVar("T")

DEMO_TOOLS = "demo"
"""``RunConfig.extra["tools"]`` of a run that was offered the demo world's tools (its run
record says ``metadata["run"]["demo_tools"]``)."""


@dataclass(frozen=True)
class Toolset:
    """Tools a run is offered, and the slimmers of their results."""

    tools: ToolRegistry
    slimmers: SlimmerRegistry | None = None


@dataclass(frozen=True)
class RerunKit:
    """What one re-run of a trace takes from its source: fresh tools, a wall clock that
    continues after the recorded readings, and an offline model that decides from its
    context alone (a replay's oracle, a resumed run's model)."""

    toolset: Toolset
    clock: Callable[[], float]
    model: ChatBackend


@dataclass(frozen=True)
class Rerunner:
    """A source that can run its traces again (the demo)."""

    key: str
    """The metadata key whose object marks a trace of this source (``demo``)."""
    detail: str
    """What its traces run against, in a line (the GUI's run status)."""
    kit: Callable[[Mapping[str, Any], int], RerunKit]
    """The kit for a trace with this metadata, its clock after that many readings."""
    open_run: Callable[[Store, str, EventBus | None], AbstractAsyncContextManager[Runner]]
    """A live runner for a stored trace, its model reachable while the context is open."""
    drive: Callable[[Runner], Awaitable[None]]
    """The trace's whole turn from the start (the source knows its task)."""
    user: Callable[[Runner], None]
    """Installs the source's scripted user on a runner (once per runner)."""
    task: Callable[[], str] | None = None
    """The first user message of a fresh trace of this source (the GUI's first Step);
    a function so registering loads nothing."""


_RERUNNERS: dict[str, Rerunner] = {}
_TOOLSETS: dict[str, Callable[[], Toolset]] = {}


def register_rerunner(rerunner: Rerunner) -> None:
    _RERUNNERS[rerunner.key] = rerunner


def rerunner_for(metadata: object) -> Rerunner | None:
    """The re-runner of a trace with this metadata, or ``None`` (imported, recorded runs)."""
    return _marked(_RERUNNERS, metadata)


def rerunner_keys() -> tuple[str, ...]:
    return tuple(_RERUNNERS)


def register_toolset(name: str, make: Callable[[], Toolset]) -> None:
    _TOOLSETS[name] = make


def toolset(name: object) -> Toolset | None:
    """A fresh tool set registered as ``name`` (``None``: no name, or none registered)."""
    make = _TOOLSETS.get(name) if isinstance(name, str) else None
    return make() if make is not None else None


def offered_tools(metadata: object) -> str | None:
    """The tool set a ``ctxlens run`` trace was offered, from its run record."""
    run = metadata.get("run") if isinstance(metadata, Mapping) else None
    return DEMO_TOOLS if isinstance(run, Mapping) and run.get("demo_tools") else None


@dataclass(frozen=True)
class RunnerKind:
    """Traces that run on another step machine than the plain ``Runner`` (a delegation
    tree's ``DelegatingRunner``, with its ``agent()`` tool), marked by a metadata key.
    Replay, resume and the GUI's Run/Step build their runner through ``make_runner``."""

    key: str
    make: Callable[..., Runner]
    """``(store, trace_id, model, config, **runner_parts)``, as ``Runner`` takes them."""
    refuse: Callable[[Mapping[str, Any]], str | None]
    """Why a trace with this metadata cannot run on its own (a delegated child runs only
    inside its parent), or ``None``; replay and resume refuse with it before writing
    anything, and the GUI shows it instead of Run/Step."""
    adopt: Callable[[Store, str, str], None]
    """Makes a replay's new trace (second id) the same kind as its source (first id)
    before it runs."""


_KINDS: dict[str, RunnerKind] = {}


def register_runner_kind(kind: RunnerKind) -> None:
    _KINDS[kind.key] = kind


def runner_kind(metadata: object) -> RunnerKind | None:
    """The kind of a trace with this metadata (``None``: the plain ``Runner``)."""
    return _marked(_KINDS, metadata)


def _marked(registered: Mapping[str, T], metadata: object) -> T | None:
    """The first entry whose key marks ``metadata`` (an object under that key): how both
    registries here recognise their traces."""
    if not isinstance(metadata, Mapping):
        return None
    return next((v for k, v in registered.items() if isinstance(metadata.get(k), dict)), None)


def refusal(metadata: object) -> str | None:
    """Why a trace with this metadata cannot be run, replayed or resumed on its own."""
    kind = runner_kind(metadata)
    return kind.refuse(metadata) if kind is not None and isinstance(metadata, Mapping) else None


def make_runner(
    store: Store, trace_id: str, model: Any, config: Any, metadata: object, **parts: Any
) -> Runner:
    """The runner a stored trace with ``metadata`` runs on."""
    kind = runner_kind(metadata)
    if kind is not None:
        return kind.make(store, trace_id, model, config, **parts)
    from core.run.runner import Runner

    return Runner(store, trace_id, model, config, **parts)
