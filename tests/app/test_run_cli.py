"""``ctxlens demo`` and ``ctxlens run``: the JSON contract keys, and a real endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from core.llm import ModelServer, ScriptedModel
from tests.core.llm.conftest import serve
from tests.core.run.helpers import script

__all__ = ["serve"]
Cli = Callable[..., tuple[int, str]]


def test_demo_json_contract(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    code, out = cli(
        "--db",
        str(db),
        "demo",
        "--steps",
        "40",
        "--compaction",
        "naive",
        "--window",
        "8000",
        "--json",
    )
    assert code == 0, out
    data = json.loads(out)
    for key in (
        "trace_id",
        "llm_calls",
        "tool_calls",
        "compactions",
        "redone_tool_calls",
        "cumulative_input_tokens",
        "prefix_cache_reuse",
    ):
        assert key in data, key
    assert data["llm_calls"] == 40 and isinstance(data["compactions"], dict)
    code, out = cli("--db", str(db), "traces", "--json")
    assert [t["id"] for t in json.loads(out)] == [data["trace_id"]]


def test_demo_rejects_bad_arguments(cli: Cli, tmp_path: Path) -> None:
    code, _ = cli("--db", str(tmp_path / "d.db"), "demo", "--window", "10")
    assert code == 2


def test_run_against_an_openai_compatible_endpoint(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    server = serve(ScriptedModel(script(2)))
    db = tmp_path / "r.db"
    code, out = cli(
        "--db",
        str(db),
        "run",
        "--base-url",
        server.url,
        "--model",
        "m",
        "--task",
        "look up two keys",
        "--set",
        "injection_interval=2",
        "--json",
    )
    # the script's lookup tool is not offered by `run` (no --demo-tools), so the model
    # ends the turn with its final answer when it cannot call it
    data = json.loads(out)
    assert {"trace_id", "llm_calls", "tool_calls", "final", "stopped"} <= set(data)
    assert data["llm_calls"] >= 1 and all(q.model == "m" for q in server.requests)
    assert code in (0, 1)
    _, shown = cli("--db", str(db), "show", data["trace_id"], "--json")
    roles = [m["role"] for m in json.loads(shown)["messages"]]
    assert roles[:2] == ["system", "user"]


def test_run_against_a_trickling_server_ends_at_the_deadline(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    """Issue 18: SSE comments every 0.1 s never trip the read timeout; ``--deadline``
    ends the call and the run ends with the timeout recorded, instead of hanging."""
    from core.llm import Fault

    server = serve(ScriptedModel(script(2)))
    server.faults.add(Fault.trickle(every_s=0.1), times=20)
    db = tmp_path / "r.db"
    code, out = cli(
        "--db", str(db), "run", "--base-url", server.url, "--model", "m",
        "--task", "look up two keys", "--deadline", "0.5", "--json",
    )  # fmt: skip
    data = json.loads(out)
    assert code in (0, 1) and data["final"] is None and data["breaker"] == [], data
    (error,) = (json.loads(e) for e in data["errors"])
    assert (error["kind"], error["detail"]) == ("timeout", "deadline"), error
    assert "0.5 s deadline" in error["message"]
