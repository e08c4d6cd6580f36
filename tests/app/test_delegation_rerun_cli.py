"""``ctxlens replay`` and ``ctxlens resume`` of a delegation demo trace run it on the
``DelegatingRunner`` (its ``agent()`` tool), found through the re-runner registry: the
replay is a recursive root of its own whose calls make a new tree, a run stopped after its
first child resumes to the whole tree, a fresh one resumes from its start, and a child is
refused with the name of its root."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.demo.delegation import create_delegation_trace
from core.store import Store
from tests.core.llm.conftest import serve
from tests.helpers.delegation_run import stopped_after

__all__ = ["serve"]
Cli = Callable[..., tuple[int, str]]
TREE = ["root", "root/scout", "root/probe", "root/analyst", "root/analyst/detail"]


def _names(node: dict[str, Any]) -> list[str]:
    return [node["name"], *(n for c in node["children"] for n in _names(c))]


def _tree(cli: Cli, db: Path, trace: str) -> dict[str, Any]:
    code, out = cli("--db", str(db), "delegation", trace, "--json")
    assert code == 0, out
    return json.loads(out)


def test_replay_of_a_delegation_root_delegates_again(
    tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "d.db"
    code, out = cli("--db", str(db), "demo", "--scenario", "delegation", "--json")
    source = json.loads(out)["trace_id"]
    code, out = cli("--db", str(db), "replay", source, "--json")
    assert code == 0, out
    replay = json.loads(out)
    assert replay["stopped"] == "done" and replay["main_llm_calls"] == 4
    tree = _tree(cli, db, replay["trace_id"])
    original = _tree(cli, db, source)
    assert tree["anchor"] == original["anchor"]  # a root of its own, the same anchor
    # the source's main path rewound the probe away: the replay never calls it
    assert _names(tree) == ["root", "root/scout", "root/analyst", "root/analyst/detail"]
    assert {c["trace_id"] for c in tree["children"]}.isdisjoint(
        c["trace_id"] for c in original["children"]
    )
    analyst = next(c for c in tree["children"] if c["name"] == "root/analyst")
    assert analyst["validator"]["verdict"] == "pass"
    child = original["children"][0]["trace_id"]
    with Store.open(db) as store:
        before = len(store.traces())
    capsys.readouterr()
    for command in ("replay", "resume"):
        code, _ = cli("--db", str(db), command, child)
        err = capsys.readouterr().err
        assert code == 2 and f"run, replay or resume its root {source} instead" in err
    with Store.open(db) as store:
        assert len(store.traces()) == before  # refused before anything was written


def test_resume_after_the_first_child_finishes_the_tree(tmp_path: Path, cli: Cli) -> None:
    db = tmp_path / "r.db"
    trace = stopped_after(db, 3)  # the root's first agent() round is done
    assert _names(_tree(cli, db, trace)) == ["root", "root/scout"]
    code, out = cli("--db", str(db), "resume", trace, "--json")
    assert code == 0, out
    result = json.loads(out)
    assert result["status"] == "resumed" and result["final"].startswith("Top 3")
    tree = _tree(cli, db, trace)
    assert _names(tree) == TREE
    assert tree["children"][0]["brief"]["index"] == 2  # the resumed root revised scout


def test_resume_of_a_fresh_delegation_trace_runs_it_from_the_start(
    tmp_path: Path, cli: Cli
) -> None:
    db = tmp_path / "f.db"
    with Store.open(db) as store:
        trace = create_delegation_trace(store)
    code, out = cli("--db", str(db), "resume", trace, "--json")
    assert code == 0, out
    assert json.loads(out)["final"].startswith("Top 3")
    assert _names(_tree(cli, db, trace)) == TREE


def test_resume_of_an_endpoint_root_keeps_its_agent_tool(
    cli: Cli, tmp_path: Path, serve: Callable[..., Any]
) -> None:
    """A ``ctxlens run --anchor`` root rewound before its second ``agent()`` call resumes
    on the DelegatingRunner: the call revises that child again."""
    from core.delegation.store import brief_versions, children
    from core.delegation.validator import VALIDATOR_MATCH
    from core.llm import Script, ScriptCall, ScriptedModel, Step

    brief = {"objective": "count the rows", "completion_criteria": ["a number"]}
    root = Script(
        (
            Step("R1", (ScriptCall.of("agent", {"name": "first", "brief": brief}),)),
            Step("R2", (ScriptCall.of("agent", {"name": "second", "brief": brief}),)),
            Step.final("RF", "42 rows"),
        ),
        name="root",
    )
    kids = [
        Script((Step.final(f"{n[0].upper()}F", "42"),), name=n, match=f"agent {n}.")
        for n in ("first", "second")
    ]
    judge = Script((Step.final("VF", "Verdict: pass"),), name="v", match=VALIDATOR_MATCH)
    server = serve(ScriptedModel(root, *kids, judge))
    anchor = tmp_path / "anchor.json"
    anchor.write_text(json.dumps({"objective": "count", "completion_criteria": ["a number"]}))
    db = tmp_path / "e.db"
    code, out = cli(
        "--db", str(db), "run", "--base-url", server.url, "--model", "m", "--task", "go",
        "--no-stream", "--anchor", str(anchor), "--json",
    )  # fmt: skip
    assert code == 0, out
    trace = json.loads(out)["trace_id"]
    with Store.open(db) as store, store.read() as r:
        first = next(
            m.sequence
            for m in r.iter_main_path(trace)
            if m.role == "tool" and m.name == "agent" and "root/first" in m.content
        )
    code, out = cli("--db", str(db), "rewind", trace, "--to", str(first), "--json")
    assert code == 0, out
    code, out = cli("--db", str(db), "resume", trace, "--json")
    assert code == 0, out
    assert json.loads(out)["final"] == "42 rows"
    with Store.open(db) as store, store.read() as r:
        second = next(c for c in children(r, trace) if c.name == "root/second")
        assert len(brief_versions(r, second.trace_id)) == 2  # the resumed call revised it
