"""``ctxlens demo`` and ``ctxlens run``: the JSON contract keys, and a real endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def _run_args(db: Path, url: str, *extra: str) -> list[str]:
    return ["--db", str(db), "run", "--base-url", url, "--model", "m", "--task", "t", *extra]


def test_a_failed_run_exits_non_zero_with_the_error_on_stderr(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer], capsys: Any
) -> None:
    from core.llm import Fault

    server = serve(ScriptedModel(script(1)))
    server.faults.add(Fault.http_error(401, {"error": {"message": "bad key"}}), times=5)
    code, out = cli(*_run_args(tmp_path / "r.db", server.url, "--json"))
    data = json.loads(out)
    assert code != 0 and data["stopped"] == "error" and data["final"] is None
    assert data["run_errors"] and "401" in capsys.readouterr().err


def test_the_fallback_model_comes_from_the_environment(
    cli: Cli,
    tmp_path: Path,
    serve: Callable[..., ModelServer],
    monkeypatch: Any,
) -> None:
    from core.llm import Fault

    monkeypatch.setenv("FALLBACK_MODEL", "fb")
    server = serve(ScriptedModel(script(0)))
    server.faults.add(Fault.overloaded(), times=3, model="m")
    code, out = cli(*_run_args(tmp_path / "r.db", server.url, "--json"))
    assert code == 0, out
    assert [q.model for q in server.requests][:4] == ["m", "m", "m", "fb"]


def test_run_with_trace_continues_its_session(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    from core.store import Store

    server = serve(ScriptedModel(script(0)))
    db = tmp_path / "r.db"
    _, out = cli(*_run_args(db, server.url, "--json"))
    trace = json.loads(out)["trace_id"]
    server2 = serve(ScriptedModel(script(0)))
    code, out = cli(*_run_args(db, server2.url, "--trace", trace, "--json"))
    assert code == 0, out
    with Store.open(str(db)) as st, st.read() as r:
        sessions = r.sessions(trace)
        assert len(sessions) == 1
        assert [t["turn_index"] for t in r.turns(sessions[0]["id"])] == [0, 1]


def test_run_help_lists_every_setting_with_its_default(capsys: Any) -> None:
    import dataclasses

    import pytest

    from app.cli import main
    from core.run.config import RunConfig

    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    for f in dataclasses.fields(RunConfig):
        if f.name != "extra":
            assert f"  {f.name}=" in text, f.name
    assert "  micro_keep_recent=8" in text and "  retry_max_tries=10" in text


def test_unknown_settings_name_the_key_and_the_nearest_ones(
    cli: Cli, tmp_path: Path, capsys: Any
) -> None:
    db = str(tmp_path / "d.db")
    code, _ = cli("--db", db, "demo", "--steps", "5", "--set", "micro_keep_recnt=6")
    err = capsys.readouterr().err
    assert code == 2 and "'micro_keep_recnt'" in err and "micro_keep_recent" in err
    code, _ = cli("--db", db, "demo", "--steps", "5", "--set", "window=lots")
    assert code == 2 and "window" in capsys.readouterr().err
    code, _ = cli("--db", db, "traces", "--json")
    assert json.loads(_) == []  # nothing half-created


def test_demo_settings_reach_the_run(cli: Cli, tmp_path: Path) -> None:
    from core.store import Store

    db = tmp_path / "d.db"
    code, out = cli("--db", str(db), "demo", "--steps", "8", "--set", "micro_step=1", "--json")
    assert code == 0, out
    with Store.open(str(db)) as st:
        meta = st.trace(json.loads(out)["trace_id"]).metadata
    assert meta["run_config"]["micro_step"] == 1 and meta["demo"]["settings"] == ["micro_step=1"]


def test_the_run_records_its_endpoint_settings_but_never_the_key(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer], monkeypatch: Any
) -> None:
    """What ``resume`` and the inspector need to know of the endpoint (model, fallback,
    deadline, whether a key was used) is stored with the run; the key itself is not."""
    from core.store import Store

    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-hunter2-0123456789abcdef")
    server = serve(ScriptedModel(script(0)))
    db = tmp_path / "r.db"
    code, out = cli(*_run_args(db, server.url, "--deadline", "30", "--json"))
    assert code == 0, out
    with Store.open(str(db)) as st:
        run = st.trace(json.loads(out)["trace_id"]).metadata["run"]
    assert (run["model"], run["deadline_s"], run["has_api_key"]) == ("m", 30.0, True)
    assert run["base_url"] == server.url and run["stream"] is True
    assert b"hunter2" not in db.read_bytes()


def test_run_takes_a_system_message_and_context_feeds(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    """INJ-1: ``--system`` wins over ``--set system_prompt``; INJ-2: each ``--feed`` reaches
    the periodic context the model receives."""
    from core.store import Store

    server = serve(ScriptedModel(script(0)))
    (tmp_path / "sys.txt").write_text("You are the FILE system prompt.")
    (tmp_path / "team.json").write_text('[{"name": "ana", "status": "reviewing"}]')
    (tmp_path / "ci.txt").write_text("CI is green")
    db = tmp_path / "r.db"
    code, out = cli(
        *_run_args(db, server.url, "--system", f"@{tmp_path / 'sys.txt'}",
                   "--set", "system_prompt=CONFIG prompt", "--set", "injection_interval=1",
                   "--feed", f"collaborators=@{tmp_path / 'team.json'}",
                   "--feed", "notifications=dataset refreshed", "--feed",
                   f"Build=@{tmp_path / 'ci.txt'}", "--json"),
    )  # fmt: skip
    assert code == 0, out
    first = server.requests[0].messages[0]
    assert first["role"] == "system" and first["content"] == "You are the FILE system prompt."
    sent = json.dumps([m for q in server.requests for m in q.messages])
    for text in ("ana: reviewing", "dataset refreshed", "## Build", "CI is green"):
        assert text in sent, text
    with Store.open(str(db)) as st, st.read() as r:
        roles = [m.role for m in r.all_messages(json.loads(out)["trace_id"])]
    assert roles.count("system") == 1


def test_run_rejects_bad_feeds_and_system_files_before_writing(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer], capsys: Any
) -> None:
    server = serve(ScriptedModel(script(0)))
    db = tmp_path / "r.db"
    (tmp_path / "bad.json").write_text('[{"who": "ana"}]')
    for extra, named in (
        (["--feed", "no equals sign"], "NAME=TEXT"),
        (["--feed", f"collaborators=@{tmp_path / 'bad.json'}"], "bad.json"),
        (["--feed", f"notes=@{tmp_path / 'missing.txt'}"], "missing.txt"),
        (["--system", f"@{tmp_path / 'missing.txt'}"], "--system"),
    ):
        code, _ = cli(*_run_args(db, server.url, *extra))
        assert code == 2 and named in capsys.readouterr().err, extra
    assert not server.requests
    code, out = cli("--db", str(db), "traces", "--json")
    assert code != 0 or json.loads(out) == []
