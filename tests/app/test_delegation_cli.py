"""``ctxlens demo --scenario delegation`` and ``ctxlens delegation TRACE --json`` (issue 15's
contract keys), errors with exit code 2, and ``ctxlens rewind`` ending later grants."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.core.llm.conftest import serve

__all__ = ["serve"]
Cli = Callable[..., tuple[int, str]]
NODE_KEYS = {"anchor", "trace_id", "brief", "refs", "validator", "children"}
REF_KEYS = {"ref_id", "version", "kind", "chars", "granted_by", "granted_at_sequence", "read"}


def _check_shape(node: dict[str, Any]) -> int:
    assert set(node) >= NODE_KEYS
    assert {"sha256", "chars"} <= set(node["anchor"])
    assert {"version", "chars"} <= set(node["brief"])
    assert {"chars", "verdict"} <= set(node["validator"])
    for ref in node["refs"]:
        assert set(ref) >= REF_KEYS
        assert isinstance(ref["read"], bool) and isinstance(ref["granted_at_sequence"], int)
    return 1 + sum(_check_shape(c) for c in node["children"])


@pytest.fixture
def demo_db(tmp_path: Path, cli: Cli) -> tuple[Path, str]:
    db = tmp_path / "d.db"
    code, out = cli("--db", str(db), "demo", "--scenario", "delegation", "--json")
    assert code == 0
    return db, json.loads(out)["trace_id"]


def test_delegation_json_contract(demo_db: tuple[Path, str], cli: Cli) -> None:
    db, root = demo_db
    code, out = cli("--db", str(db), "delegation", root, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["trace_id"] == root and _check_shape(report) == 5
    analyst = next(c for c in report["children"] if c["name"] == "root/analyst")
    code, out = cli("--db", str(db), "delegation", analyst["trace_id"], "--json")
    assert json.loads(out)["children"][0]["name"] == "root/analyst/detail"
    code, text = cli("--db", str(db), "delegation", root)
    assert code == 0 and "root/analyst/detail" in text and "verdict pass" in text


def test_rewind_on_the_command_line_ends_later_grants(demo_db: tuple[Path, str], cli: Cli) -> None:
    db, root = demo_db
    _, out = cli("--db", str(db), "delegation", root, "--json")
    analyst = next(c for c in json.loads(out)["children"] if c["name"] == "root/analyst")
    before = analyst["call_sequence"] - 2  # the user message before the analyst call
    code, rewound = cli("--db", str(db), "rewind", root, "--to", str(before), "--json")
    assert code == 0
    _, out = cli("--db", str(db), "delegation", root, "--json")
    analyst = next(c for c in json.loads(out)["children"] if c["name"] == "root/analyst")
    assert {r["dropped"] for r in analyst["refs"]} == {f"rewind to {before}"}
    ended = json.loads(rewound)["grants_ended"]  # the rewind says which grants it ended
    assert {(g["holder"], g["ref_id"]) for g in ended} == {
        (analyst["trace_id"], r["ref_id"]) for r in analyst["refs"]
    }
    assert {g["dropped"] for g in ended} == {f"rewind to {before}"}
    code, text = cli("--db", str(db), "rewind", root, "--to", str(before))
    assert code == 0 and "ref grants" not in text  # nothing left to end the second time
    detail = analyst["children"][0]
    assert detail["refs"][0]["dropped"] is None  # granted by the analyst, not by the root


def test_errors_exit_2(tmp_path: Path, cli: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "e.db"
    cli("--db", str(db), "demo", "--scenario", "delegation")
    code, _ = cli("--db", str(db), "delegation", "nope", "--json")
    assert code == 2 and "not found" in capsys.readouterr().err
    from core.store import Store

    with Store.open(db) as s:
        plain = s.create_trace("plain").id
    code, _ = cli("--db", str(db), "delegation", plain, "--json")
    assert code == 2 and "not part of a delegation tree" in capsys.readouterr().err


def test_fixed_parts_over_the_validator_budget_give_unknown(tmp_path: Path, cli: Cli) -> None:
    db = tmp_path / "u.db"
    code, out = cli(
        "--db",
        str(db),
        "demo",
        "--scenario",
        "delegation",
        "--limit",
        "validator_chars=900",
        "--json",
    )
    assert code == 0
    nodes = {}

    def walk(n: dict[str, Any]) -> None:
        nodes[n["name"]] = n["validator"]
        for c in n["children"]:
            walk(c)

    walk(json.loads(out)["delegation"])
    for name, v in nodes.items():
        if name == "root":
            continue
        if v["fixed_chars"] > 900:
            assert v["verdict"] == "unknown"
            assert all(p["fixed"] for p in v["parts"])  # only the fixed parts
        else:
            assert v["verdict"] == "pass" and v["chars"] <= 900
    assert "unknown" in {v["verdict"] for v in nodes.values()}
    code, _ = cli("--db", str(db), "demo", "--scenario", "delegation", "--limit", "bogus=3")
    assert code == 2


def test_run_with_an_anchor_delegates_against_an_endpoint(
    cli: Cli, tmp_path: Path, serve: Callable[..., Any]
) -> None:
    from core.delegation.validator import VALIDATOR_MATCH
    from core.llm import Script, ScriptCall, ScriptedModel, Step

    brief = {"objective": "count the rows", "completion_criteria": ["a number"]}
    root = Script(
        (
            Step("R1", (ScriptCall.of("agent", {"name": "counter", "brief": brief}),)),
            Step.final("RF", "42 rows"),
        ),
        name="root",
    )
    child = Script((Step.final("CF", "42"),), name="c", match="You are delegated agent counter.")
    judge = Script(
        (Step.final("VF", "Verdict: fail, no evidence"),), name="v", match=VALIDATOR_MATCH
    )
    server = serve(ScriptedModel(root, child, judge))
    anchor = tmp_path / "anchor.json"
    anchor.write_text(
        json.dumps(
            {
                "objective": "count",
                "completion_criteria": ["a number"],
                "constraints": ["read only"],
            }
        )
    )
    db = tmp_path / "r.db"
    base = (
        "--db",
        str(db),
        "run",
        "--base-url",
        server.url,
        "--model",
        "m",
        "--task",
        "go",
        "--no-stream",
    )
    code, out = cli(*base, "--anchor", str(anchor), "--json")
    assert code == 0, out
    root_id = json.loads(out)["trace_id"]
    _, out = cli("--db", str(db), "delegation", root_id, "--json")
    (kid,) = json.loads(out)["children"]
    assert kid["validator"]["verdict"] == "fail"
    assert kid["brief"]["content"]["constraints"] == ["read only"]  # inherited from the anchor
    bad = tmp_path / "bad.json"
    bad.write_text('{"objective": "x",\n "completion_criteria": [NaN]}')
    code, _ = cli(*base, "--anchor", str(bad))
    assert code == 2
    bad.write_text('{"objective": "x",\n oops}')
    code, _ = cli(*base, "--anchor", str(bad))
    assert code == 2
    _, listed = cli("--db", str(db), "traces", "--json")
    assert len(json.loads(listed)) == 2  # the refused runs wrote nothing


def test_export_import_and_copy_keep_the_delegation_tree(
    demo_db: tuple[Path, str], cli: Cli, tmp_path: Path
) -> None:
    db, root = demo_db
    _, before = cli("--db", str(db), "delegation", root, "--json")
    _, listed = cli("--db", str(db), "traces", "--json")
    files = []
    for tr in json.loads(listed):
        out = tmp_path / f"{tr['id']}.json"
        assert cli("--db", str(db), "export", tr["id"], "-o", str(out))[0] == 0
        files.append(str(out))
    other = tmp_path / "other.db"
    code, _ = cli("--db", str(other), "import", *files, "--json")
    assert code == 0
    _, after = cli("--db", str(other), "delegation", root, "--json")
    assert json.loads(after) == json.loads(before)  # grants, reads, versions, verdicts
    copied = tmp_path / "copied.db"
    assert cli("copy", "--from", str(db), "--to", str(copied), "--quiet")[0] == 0
    _, again = cli("--db", str(copied), "delegation", root, "--json")
    assert json.loads(again) == json.loads(before)


def test_a_trace_with_messages_cannot_become_a_root(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its first task context is written without the anchor: refused, nothing written."""
    from core.delegation.store import node
    from core.records import NewMessage
    from core.store import Store

    db = tmp_path / "p.db"
    with Store.open(db) as store:
        trace = store.create_trace("plain")
        store.append(trace.id, [NewMessage("user", "an earlier task")])
    anchor = tmp_path / "anchor.json"
    anchor.write_text(json.dumps({"objective": "count", "completion_criteria": ["a number"]}))
    code, _ = cli(
        "--db", str(db), "run", "--trace", trace.id, "--anchor", str(anchor),
        "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--task", "go",
    )  # fmt: skip
    assert code == 2 and "already has messages" in capsys.readouterr().err
    with Store.open(db) as store, store.read() as r:
        assert node(r, trace.id) is None and len(list(r.iter_main_path(trace.id))) == 1
