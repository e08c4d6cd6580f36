"""CLI contract of replay, compare and resume (issue 9): JSON keys, the HTML file, errors."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.shared_demo import demo_copy

Cli = Callable[..., tuple[int, str]]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return demo_copy(tmp_path_factory, tmp_path_factory.mktemp("cli"))


def test_replay_json_contract(cli: Cli, demo: tuple[Path, str]) -> None:
    db, trace_id = demo
    code, out = cli("--db", str(db), "replay", trace_id[:8], "--set", "window=9000", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"trace_id", "calls", "compactions", "input_tokens", "diverged_at"} <= set(data)
    assert data["diverged_at"] is None and data["calls"] > 100
    assert data["source_trace"] == trace_id and data["settings"] == ["window=9000"]
    code, out = cli("--db", str(db), "traces", "--json")
    assert data["trace_id"] in out


def test_compare_writes_json_and_a_standalone_html(
    cli: Cli, demo: tuple[Path, str], tmp_path: Path
) -> None:
    db, trace_id = demo
    code, out = cli("--db", str(db), "replay", trace_id, "--from-call", "40", "--json")
    assert code == 0
    replayed = json.loads(out)
    assert replayed["start"] == "prepare" and replayed["copied"]["calls"] == 40
    page = tmp_path / "report.html"
    code, out = cli(
        "--db", str(db), "compare", trace_id, replayed["trace_id"], "--html", str(page), "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["summary"]["same_context_calls"] == len(data["calls"])
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text
    assert not re.search(r"https?://", text)


def test_errors_are_one_line_and_exit_2(
    cli: Cli, demo: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, trace_id = demo
    assert cli("--db", str(db), "replay", trace_id, "--set", "nonsense=1")[0] == 2
    assert cli("--db", str(db), "replay", trace_id, "--from-call", "999")[0] == 2
    assert cli("--db", str(db), "resume", trace_id, "--checkpoint", "1")[0] == 2
    missing = tmp_path / "no" / "r.html"
    assert cli("--db", str(db), "compare", trace_id, trace_id, "--html", str(missing))[0] == 2
    err = capsys.readouterr().err
    assert err.count("ctxlens: error:") == 4 and "Traceback" not in err
    assert "stale" in err and "--from-call 999" in err


class FailAfter:
    """The endpoint goes away after ``n`` answers (every later request is a 500)."""

    def __init__(self, backend: object, n: int) -> None:
        self.backend = backend
        self.n = n

    def reply(self, request: object) -> object:
        self.n -= 1
        if self.n < 0:
            raise RuntimeError("the endpoint went away")
        return self.backend.reply(request)  # type: ignore[attr-defined]


def test_a_stopped_ctxlens_run_resumes_against_another_endpoint(cli: Cli, tmp_path: Path) -> None:
    from core.demo.scenario import TASK, make_model
    from core.demo.world import World
    from core.llm import ModelServer
    from core.store import Store

    db = str(tmp_path / "run.db")
    with ModelServer(FailAfter(make_model(World()), 25)) as failing:  # type: ignore[arg-type]
        url = failing.url.replace("http://", "http://user:secret@")
        code, out = cli(
            "--db", db, "run", "--base-url", url, "--model", "scripted", "--task", TASK,
            "--demo-tools", "--max-steps", "200", "--json",
        )  # fmt: skip
    first = json.loads(out)
    assert first["errors"] and first["llm_calls"] == 26
    with Store.open(db) as store:
        meta = store.trace(first["trace_id"]).metadata
    assert meta["run"]["demo_tools"] and "secret" not in json.dumps(meta)
    with ModelServer(make_model(World())) as healthy:
        code, out = cli(
            "--db", db, "resume", first["trace_id"], "--base-url", healthy.url, "--json"
        )
    assert code == 0, out
    result = json.loads(out)
    assert result["status"] == "resumed" and result["final"].startswith("Top 10")
    assert result["redone_tool_calls"] == 0


def test_replay_on_complete_removes_messages_and_lowers_input(
    cli: Cli, demo: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    from core.store import Store
    from tests.helpers.shared_demo import shared_demo

    db, trace_id = demo
    source = json.loads((shared_demo(tmp_path_factory) / "result.json").read_text())
    code, out = cli("--db", str(db), "replay", trace_id, "--set", "goal_mode=on_complete", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["input_tokens"] < source["cumulative_input_tokens"]
    with Store.open(str(db)) as st, st.read() as r:
        goal = [e for e in r.compactions(data["trace_id"]) if e.trigger == "on_complete"]
    assert goal and all(e.removed and e.tokens_after < e.tokens_before for e in goal)
