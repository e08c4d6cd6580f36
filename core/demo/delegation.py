"""The delegation scenario (``ctxlens demo --scenario delegation``): a root with two
children and a grandchild, deterministic and offline.

The root (``root``) delegates to ``scout`` with its own brief as a ref, then revises
``scout`` (a second brief version; the first grant ends), delegates to ``probe`` and is
rewound before that call (the user drops the probe: its grant ends by rewind), then
delegates to ``analyst`` with two refs. ``analyst`` re-grants one (scout's reviewed result)
to its child ``detail`` and not the other (the root's brief), so ``detail`` is refused when
it tries to read that one. Each child's report gets a validator verdict.

The scripted model is served over HTTP on 127.0.0.1 like the main demo; it copies the
exact ref versions it needs from its context (``VersionCopyingModel``), as a model would.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from core.delegation.config import DEFAULT_LIMITS, DelegationLimits
from core.delegation.report import delegation_report
from core.delegation.runner import DelegatingRunner
from core.delegation.runtime import DelegationSettings, start_root
from core.delegation.store import node
from core.delegation.validator import VALIDATOR_MATCH
from core.demo.scenario import demo_clock
from core.demo.workspace import WRITE_FILE, workspace_tools
from core.llm import ChatClient, ModelServer, Script, ScriptCall, ScriptedModel, Step
from core.llm.backend import BackendReply, ChatRequest
from core.llm.script import message_text
from core.records import ToolCall
from core.run.config import RunConfig
from core.run.events import EventBus
from core.run.runner import Runner
from core.store import Store

ROOT_PROMPT = "You are the root coordinator of a delegation tree."
ANCHOR = {
    "objective": "Name the three riskiest entities of the 30-day window, each with evidence",
    "completion_criteria": ["three entities, ranked", "one evidence window per entity"],
    "constraints": ["cite an evidence window (win-NNNN) for every claim"],
}
TASK = "Coordinate the analysis through child agents; do not analyse yourself."
PROBE_DROPPED = "The probe is out of scope: drop it and go on."
CANDIDATE = (
    "Candidate answer: ent-00017, ent-00042, ent-00101; the analyst ranks them with the "
    "scout's result."
)
RANKING_FILE = "ranking.md"
RANKING = "\n".join(
    [
        "# Ranking of the 30-day window",
        "1. ent-00017: score 97, evidence win-1001",
        "2. ent-00042: score 91, evidence win-1003",
        "3. ent-00101: score 88, evidence win-1005",
    ]
)
_PLACEHOLDER = re.compile(r"\{\{version:([^}]+)\}\}")
_SEEN = re.compile(r"(\S+) version ([0-9a-f]{64})")


def _pin(ref_id: str) -> dict[str, str]:
    return {"ref_id": ref_id, "version": "{{version:" + ref_id + "}}"}


SCOUT_BRIEF = {
    "objective": "List the candidate risk entities",
    "reason": "the analyst needs a short list",
    "completion_criteria": ["three candidates"],
    "constraints": ["use the 30-day totals only"],
    "context_refs": [_pin("brief:root")],
}
SCOUT_REVISED = {
    **SCOUT_BRIEF,
    "objective": "List the candidate risk entities with their scores",
    "expected_outputs": ["a risk score per candidate"],
}
PROBE_BRIEF = {
    "objective": "Probe the archived event source",
    "completion_criteria": ["say whether the source exists"],
    "context_refs": [_pin("brief:root")],
}
ANALYST_BRIEF = {
    "objective": "Rank the candidates and attach evidence",
    "completion_criteria": ["three ranked entities with evidence windows"],
    "findings": ["the scout's list is reviewed"],
    "context_refs": [_pin("brief:root"), _pin("result:root/scout")],
}
DETAIL_BRIEF = {
    "objective": "Check the top candidate's evidence window",
    "completion_criteria": ["confirm or reject the top candidate"],
    "context_refs": [_pin("result:root/scout")],
}


def _agent(label: str, name: str, brief: Mapping[str, Any], text: str = "") -> Step:
    return Step(label, (ScriptCall.of("agent", {"name": name, "brief": dict(brief)}),), text)


def _read(label: str, ref_id: str) -> Step:
    return Step.tool(label, "read_context_ref", **_pin(ref_id))


def scripts() -> tuple[Script, ...]:
    root = Script(
        (
            _agent("R1", "scout", SCOUT_BRIEF, "First a short list."),
            _agent("R2", "scout", SCOUT_REVISED, "Revising the scout: scores too."),
            _agent("R3", "probe", PROBE_BRIEF, "Probing the archive."),
            _agent("R4", "analyst", ANALYST_BRIEF, CANDIDATE),
            Step.final(
                "RF", "Top 3: ent-00017 (win-1001), ent-00042 (win-1003), ent-00101 (win-1005)."
            ),
        ),
        name="root",
    )
    return (
        root,
        _child(
            "scout",
            [_read("S1", "brief:root")],
            "Candidates: ent-00017 (score 97), ent-00042 (91), ent-00101 (88).",
        ),
        _child("probe", [], "The archived source exists but is empty."),
        _child(
            "analyst",
            [
                _read("A1", "result:root/scout"),
                _agent("A2", "detail", DETAIL_BRIEF, "Checking the top one."),
                Step.tool(
                    "A3", WRITE_FILE, "Writing the ranking.", path=RANKING_FILE, content=RANKING
                ),
            ],
            "Ranked: 1. ent-00017 (win-1001), 2. ent-00042 (win-1003), 3. ent-00101 (win-1005).\n"
            f"Artifact: {RANKING_FILE}",
        ),
        _child(
            "detail",
            [_read("G1", "result:root/scout"), _read("G2", "brief:root")],
            "ent-00017 confirmed by win-1001 (the root brief was not granted to me).",
        ),
        Script(
            (Step.final("VF", "Verdict: pass. Every criterion is met."),),
            name="validator",
            match=VALIDATOR_MATCH,
        ),
    )


def _child(name: str, steps: Sequence[Step], final: str) -> Script:
    label = name[0].upper() + "F"
    return Script(
        (*steps, Step.final(label, final)), name=name, match=f"You are delegated agent {name}."
    )


class VersionCopyingModel(ScriptedModel):
    """The scripted model, filling ``{{version:REF}}`` with the newest version of REF that
    its context shows (left as is when the context shows none)."""

    def reply(self, request: ChatRequest) -> BackendReply:
        out = super().reply(request)
        if not out.tool_calls:
            return out
        seen: dict[str, str] = {}
        for m in request.messages:
            for ref, version in _SEEN.findall(message_text(m)):
                seen[ref] = version
        calls = tuple(
            ToolCall(c.id, c.name, _PLACEHOLDER.sub(lambda g: seen.get(g[1], g[0]), c.arguments))
            for c in out.tool_calls
        )
        return BackendReply(text=out.text, tool_calls=calls)


def drop_probe_after(runner: Runner) -> None:
    """The user drops the probe once it ran: rewind the root to just before that call and
    say so (``[done R3]`` marks the step done for the scripted model)."""

    def check(_payload: dict[str, Any]) -> None:
        call = runner.call_message
        if call is None or not any('"probe"' in c.arguments for c in call.tool_calls):
            return
        assert call.parent_sequence is not None
        runner.rewind(call.parent_sequence)
        runner.add_user_message(f"{PROBE_DROPPED} [done R3]")

    runner.hooks.on("step_complete", check)


def delegation_config() -> RunConfig:
    return RunConfig(
        model="scripted",
        system_prompt=ROOT_PROMPT,
        max_steps=30,
        stream=False,
        injection_interval=3,
        checkpoints=False,
    )


DEMO_KEY = "delegation_demo"
"""The metadata key of a delegation demo root (``{limits}``): how it runs again
(``core/demo/rerun.py``, ``core/run/rerunners.py``)."""
TITLE = "Demo: recursive delegation"


def create_delegation_trace(store: Store, limits: DelegationLimits = DEFAULT_LIMITS) -> str:
    """A new, empty delegation demo root whose metadata says how to run it; it becomes a
    recursive root (anchor, settings) when its run opens (``open_delegation_run``)."""
    trace = store.create_trace(
        TITLE, source="ctxlens-delegation", metadata={DEMO_KEY: {"limits": limits.to_json()}}
    )
    return trace.id


def demo_limits(metadata: Mapping[str, Any] | None) -> DelegationLimits:
    """The limits a delegation demo trace was created with."""
    record = (metadata or {}).get(DEMO_KEY)
    limits = record.get("limits") if isinstance(record, Mapping) else None
    return (
        DEFAULT_LIMITS.with_settings(dict(limits))
        if isinstance(limits, Mapping)
        else DEFAULT_LIMITS
    )


def demo_settings(limits: DelegationLimits) -> DelegationSettings:
    return DelegationSettings(limits=limits, child_max_steps=12)


def delegation_model() -> VersionCopyingModel:
    return VersionCopyingModel(*scripts())


@asynccontextmanager
async def open_delegation_run(
    store: Store, trace_id: str, events: EventBus | None = None, ticks: int = 0
) -> AsyncIterator[Runner]:
    """A ``DelegatingRunner`` for a delegation demo trace (made a recursive root first if it
    is not one yet), its scripted model served on 127.0.0.1 while the context is open, the
    demo's user (``drop_probe_after``) installed. The GUI steps it; ``drive`` runs it."""
    limits = demo_limits(store.trace(trace_id).metadata)
    with ModelServer(delegation_model()) as server:
        async with ChatClient(server.settings(model="scripted", stream=False)) as client:
            runner = DelegatingRunner(
                store,
                trace_id,
                client,
                delegation_config(),
                tools=workspace_tools(),
                events=events,
                wall_clock=demo_clock(ticks),
                delegation=demo_settings(limits),
            )
            with store.read() as r:
                is_root = node(r, trace_id) is not None
            if not is_root:
                names = [s["function"]["name"] for s in runner.tool_schemas()]
                start_root(store, trace_id, ANCHOR, names, settings=runner.delegation)
            drop_probe_after(runner)
            yield runner


async def drive(runner: Runner) -> None:
    """The delegation demo's whole turn from the start."""
    await runner.start_turn(TASK)
    await runner.run()


async def run_delegation_async(
    store: Store, limits: DelegationLimits = DEFAULT_LIMITS, events: EventBus | None = None
) -> dict[str, Any]:
    trace_id = create_delegation_trace(store, limits)
    async with open_delegation_run(store, trace_id, events) as runner:
        await runner.start_turn(TASK)
        result = await runner.run()
    with store.read() as r:
        report = delegation_report(r, trace_id, limits)
    return {
        "trace_id": trace_id,
        "stopped": result.stopped,
        "final": runner.final,
        "delegation": report,
    }


def run_delegation(store: Store, limits: DelegationLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    return asyncio.run(run_delegation_async(store, limits))
