"""Delegation through the real run loop: scripted model on 127.0.0.1, real SQLite store."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from core.delegation.brief import normalize_brief
from core.delegation.config import DelegationLimits
from core.delegation.normal import DelegationError
from core.delegation.runner import DelegatingRunner
from core.delegation.runtime import DelegationSettings, start_root
from core.delegation.store import brief_versions, children, snapshots
from core.demo import delegation as demo
from core.llm import ChatClient, ModelServer, Script, ScriptCall, Step
from core.store import Store

ANCHOR_MARK = "[Root task anchor]"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, Any]]:
    store = Store.open(tmp_path_factory.mktemp("del") / "d.db")
    return store, demo.run_delegation(store)


def _nodes(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {report["name"]: report}
    for c in report["children"]:
        out.update(_nodes(c))
    return out


def test_demo_tree_revision_regrant_rewind_and_verdicts(demo_store: Any) -> None:
    _store, result = demo_store
    nodes = _nodes(result["delegation"])
    assert set(nodes) == {"root", "root/scout", "root/probe", "root/analyst", "root/analyst/detail"}
    scout = nodes["root/scout"]
    assert scout["brief"]["index"] == 2
    assert [c["field"] for c in scout["brief"]["changes"]] == ["objective", "expected_outputs"]
    assert [g["dropped"] for g in scout["refs"]] == ["revised", None]
    (probe_grant,) = nodes["root/probe"]["refs"]
    assert probe_grant["dropped"] == f"rewind to {nodes['root/probe']['call_sequence'] - 1}"
    analyst, detail = nodes["root/analyst"], nodes["root/analyst/detail"]
    assert {g["ref_id"] for g in analyst["refs"]} == {"brief:root", "result:root/scout"}
    assert [g["ref_id"] for g in detail["refs"]] == ["result:root/scout"]  # one re-granted
    assert detail["refs"][0]["granted_by"] == analyst["trace_id"] and detail["refs"][0]["read"]
    left = {x["label"]: x["reason"] for x in analyst["validator"]["left_out"]}
    assert left[f"ref brief:root@{analyst['refs'][0]['version'][:12]}"].startswith("not read")
    assert not any(x["label"].startswith("ref result:") for x in analyst["validator"]["left_out"])
    for name, n in nodes.items():
        if name != "root":
            assert n["validator"]["verdict"] == "pass"
            assert 0 < n["validator"]["chars"] <= 50_000
    assert result["final"].startswith("Top 3")


def test_old_brief_versions_stay_unchanged(demo_store: Any) -> None:
    store, result = demo_store
    scout = _nodes(result["delegation"])["root/scout"]["trace_id"]
    with store.read() as r:
        v1, v2 = brief_versions(r, scout)
    first = normalize_brief(
        {**demo.SCOUT_BRIEF, "context_refs": v1.brief.to_json()["context_refs"]},
        tuple(demo.ANCHOR["constraints"]),
    )
    assert v1.brief == first and v2.brief.objective != first.objective


def test_anchor_once_in_initial_context_and_in_each_current_context(demo_store: Any) -> None:
    store, result = demo_store
    seen_context = False
    with store.read() as r:
        for n in _nodes(result["delegation"]).values():
            msgs = list(r.iter_main_path(n["trace_id"]))
            initial = next(m for m in msgs if m.role == "user" and m.kind == "message")
            assert initial.content.count(ANCHOR_MARK) == 1
            others = [m for m in msgs if m.kind == "message" and m is not initial]
            assert not any(ANCHOR_MARK in m.content for m in others if m.role != "tool")
            for m in msgs:
                if m.role == "tool" and m.name == "get_current_context":
                    assert m.content.count(ANCHOR_MARK) == 1
                    assert '"report"' not in m.content  # metadata only, never contents
                    seen_context = True
    assert seen_context  # the root's periodic injection carried a Delegation section


def test_a_rewound_childs_result_leaves_the_catalogue(demo_store: Any) -> None:
    store, result = demo_store
    with store.read() as r:
        injected = [
            m.content
            for m in r.iter_main_path(result["trace_id"])
            if m.role == "tool" and m.name == "get_current_context"
        ]
        made = {s.ref_id for s in snapshots(r, result["trace_id"], on_main_path=False)}
    assert injected and "result:root/scout" in injected[-1]
    assert "result:root/probe" not in injected[-1]  # made by the call the rewind left
    assert "result:root/probe" in made  # still stored, nothing deleted


def test_a_level_that_does_not_regrant_cuts_off_the_grandchild(demo_store: Any) -> None:
    store, result = demo_store
    detail = _nodes(result["delegation"])["root/analyst/detail"]["trace_id"]
    with store.read() as r:
        tools = [m for m in r.iter_main_path(detail) if m.role == "tool"]
    refused = [m for m in tools if "brief:root" in m.content and "not granted" in m.content]
    assert len(refused) == 1


def test_demo_is_deterministic(demo_store: Any, tmp_path: Path) -> None:
    _, first = demo_store
    with Store.open(tmp_path / "again.db") as other:
        second = demo.run_delegation(other)

    def stable(report: dict[str, Any]) -> Any:
        def drop_usage(n: dict[str, Any]) -> None:
            # trace ids are random, and the validator's prompt tokens count their text
            (n["validator"].get("model_call") or {}).pop("usage", None)
            for c in n["children"]:
                drop_usage(c)

        tree = copy.deepcopy(report["delegation"])
        drop_usage(tree)
        text = json.dumps(tree, sort_keys=True)
        return re.sub(r'"[0-9a-f]{16}"', '"<trace>"', text)

    assert stable(first) == stable(second)


def _part(node: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(p for p in node["validator"]["parts"] if p["label"].startswith(prefix))


def test_validator_gets_the_named_artifact_whole_and_the_root_candidate(demo_store: Any) -> None:
    store, result = demo_store
    nodes = _nodes(result["delegation"])
    analyst, detail = nodes["root/analyst"], nodes["root/analyst/detail"]
    artifact = _part(analyst, f"artifact {demo.RANKING_FILE}")
    assert artifact["label"].endswith("(file written #6)")  # the child's own write_file call
    assert artifact["chars"] == len(demo.RANKING)
    with store.read() as r:
        root_path = {m.sequence: m for m in r.iter_main_path(result["trace_id"])}
    for child in (analyst, detail):  # the root's newest text when each was reviewed
        candidate = _part(child, "root candidate answer")
        assert candidate["chars"] == len(demo.CANDIDATE)
        assert root_path[candidate["sequence"]].content == demo.CANDIDATE
    assert not any(p["label"].startswith("artifact") for p in detail["validator"]["parts"])


def test_an_artifact_over_the_budget_makes_the_verdict_unknown_uncut(
    demo_store: Any, tmp_path: Path
) -> None:
    _, first = demo_store
    analyst = _nodes(first["delegation"])["root/analyst"]
    limit = analyst["validator"]["fixed_chars"] - 1  # the artifact tips it over
    with Store.open(tmp_path / "tight.db") as store:
        result = demo.run_delegation(store, DelegationLimits(validator_chars=limit))
    nodes = _nodes(result["delegation"])
    tight = nodes["root/analyst"]["validator"]
    assert tight["verdict"] == "unknown" and tight["fixed_chars"] > limit
    assert tight["model_call"] == {"skipped": "the fixed parts alone exceed the budget"}
    assert _part(nodes["root/analyst"], "artifact")["chars"] == len(demo.RANKING)  # whole
    assert nodes["root/scout"]["validator"]["verdict"] == "pass"  # its fixed parts fit


# -- refusals through the run loop --------------------------------------------------------------
def _run(store: Store, steps: list[Step], settings: DelegationSettings, *child: Script) -> Any:
    root = Script((*steps, Step.final("RF", "done")), name="root")

    async def go() -> DelegatingRunner:
        model = demo.VersionCopyingModel(root, *child, *demo.scripts()[-1:])
        with ModelServer(model) as server:
            async with ChatClient(server.settings(model="scripted", stream=False)) as client:
                trace = store.create_trace("t")
                runner = DelegatingRunner(
                    store, trace.id, client, demo.delegation_config(), delegation=settings
                )
                start_root(store, trace.id, demo.ANCHOR)
                await runner.start_turn("go")
                await runner.run()
                return runner

    return asyncio.run(go())


def _agent(label: str, **args: Any) -> Step:
    return Step(label, (ScriptCall.of("agent", args),))


def test_agent_refuses_messages_foreign_pins_and_big_results(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "r.db")
    brief = {"objective": "o", "completion_criteria": ["c"]}
    foreign = {**brief, "context_refs": [{"ref_id": "brief:other", "version": "f" * 64}]}
    runner = _run(
        store,
        [
            _agent("R1", name="a", brief=brief, messages=[{"role": "user", "content": "hi"}]),
            _agent("R2", name="a", brief=foreign),
            _agent("R3", name="a", brief=brief),
        ],
        DelegationSettings(limits=DelegationLimits(snapshot_chars=50)),
        Script((Step.final("AF", "a report " * 20),), name="a", match="You are delegated agent a."),
    )
    with store.read() as r:
        results = [
            m.content
            for m in r.iter_main_path(runner.trace_id)
            if m.role == "tool" and m.name == "agent"
        ]
        kids = children(r, runner.trace_id)
    assert "accepts no messages" in results[0]
    assert "not in this trace's local catalogue" in results[1]
    assert "verdict pass; no ref: reviewed result of root/a is" in results[2]
    assert len(kids) == 1 and len(store.traces()) == 2  # refused calls wrote nothing


def test_a_root_without_an_anchor_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "n.db")
    trace = store.create_trace("plain")
    with pytest.raises(DelegationError, match="needs a RootTaskAnchor"):
        start_root(store, trace.id, None)
    runner = DelegatingRunner(store, trace.id, None, demo.delegation_config())  # type: ignore[arg-type]
    with pytest.raises(DelegationError, match="has no RootTaskAnchor"):
        asyncio.run(runner.start_turn("go"))
    with store.read() as r:
        assert r.trace(trace.id).head is None  # nothing was written


def test_a_call_that_differs_from_the_approved_brief_is_refused(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "a.db")
    brief = {"objective": "o", "completion_criteria": ["c"]}

    def approver(raw: Any) -> Any:  # a person approved it with one more constraint
        return {**raw, "constraints": ["stay read-only"]}

    runner = _run(
        store,
        [
            _agent("R1", name="a", brief=brief),
            _agent("R2", name="a", brief={**brief, "constraints": [" stay read-only "]}),
        ],
        DelegationSettings(approver=approver),
        Script((Step.final("AF", "ok"),), name="a", match="You are delegated agent a."),
    )
    with store.read() as r:
        results = [
            m.content
            for m in r.iter_main_path(runner.trace_id)
            if m.role == "tool" and m.name == "agent"
        ]
        (kid,) = children(r, runner.trace_id)
        (version,) = brief_versions(r, kid.trace_id)
    assert "differs from the approved one in constraints" in results[0]
    assert "verdict pass" in results[1]  # the same brief after normalization
    assert version.approved_version == version.version
