"""Issue 21: cost per call and per trace from recorded usage, through the CLI.

A real run against a loopback OpenAI-compatible server (its usage reports a prefix cache)
is priced from the shipped table; the expected figures are recomputed here from the
exported calls and the table file, independently of ``core/cost``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.llm import ModelServer, Script, ScriptedModel, Step
from tests.core.llm.conftest import serve

__all__ = ["serve"]
Cli = Callable[..., tuple[int, str]]
PRICES = Path(__file__).resolve().parents[2] / "core" / "cost" / "data" / "prices.json"


def script(goals: int) -> Script:
    """Calls that only use the built-in goal tool (``run`` offers no other tools)."""
    steps = [Step.goal(f"G{i}", add=[f"Goal {i}"], focus=str(i + 1)) for i in range(goals)]
    return Script((*steps, Step.final("F", "Done.")))


def _run(cli: Cli, db: Path, server: ModelServer, model: str) -> str:
    code, out = cli(
        "--db", str(db), "run", "--base-url", server.url, "--model", model,
        "--task", "look up two keys", "--json",
    )  # fmt: skip
    assert code in (0, 1), out
    return str(json.loads(out)["trace_id"])


def _expected_usd(cli: Cli, db: Path, trace_id: str, model: str) -> tuple[float, float, int, int]:
    """(usd, saved, calls with usage, calls without) from the export and the table file."""
    row = next(r for r in json.loads(PRICES.read_text())["models"] if r["model"] == model)
    code, out = cli("--db", str(db), "export", trace_id, "--format", "json")
    assert code == 0
    calls = json.loads(out)["llm_calls"]
    usd = saved = 0.0
    with_usage = [c for c in calls if c["usage"]]
    for call in with_usage:
        u = call["usage"]
        cached = u["prompt_tokens_details"]["cached_tokens"]
        fresh = u["prompt_tokens"] - cached
        usd += fresh * row["input"] + cached * row["cache_read"]
        usd += u["completion_tokens"] * row["output"]
        saved += cached * (row["input"] - row["cache_read"])
    return usd / 1e6, saved / 1e6, len(with_usage), len(calls) - len(with_usage)


def test_an_own_run_is_priced_per_call_and_per_trace(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    db = tmp_path / "c.db"
    trace_id = _run(cli, db, serve(ScriptedModel(script(3))), "gpt-4o-2024-08-06")
    usd, saved, calls, without = _expected_usd(cli, db, trace_id, "gpt-4o")
    code, out = cli("--db", str(db), "traces", "--json")
    assert code == 0
    cost = json.loads(out)[0]["cost"]
    assert calls >= 3 and cost["priced_calls"] == calls and cost["unpriced_calls"] == without
    assert cost["usd"] == pytest.approx(usd, abs=1e-6)
    assert cost["saved_usd"] == pytest.approx(saved, abs=1e-6) and saved > 0
    assert cost["table_date"] == json.loads(PRICES.read_text())["table_date"]
    assert cost["by_agent"] == {"main": pytest.approx(usd, abs=1e-6)}
    # context --call N: the cost so far and that call alone
    code, out = cli("--db", str(db), "context", trace_id, "--call", "0", "--json")
    first = json.loads(out)["cost"]
    assert first["priced_calls"] == 1 and 0 < first["usd"] < usd
    assert first["call"]["usd"] == pytest.approx(first["usd"])
    code, out = cli("--db", str(db), "context", trace_id, "--json")
    assert json.loads(out)["cost"]["usd"] == pytest.approx(usd, abs=1e-6)


def test_an_unknown_model_has_no_price_until_one_is_given(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    db = tmp_path / "u.db"
    trace_id = _run(cli, db, serve(ScriptedModel(script(2))), "my-local-model")
    code, out = cli("--db", str(db), "traces", "--json")
    cost = json.loads(out)[0]["cost"]
    assert cost["usd"] is None and cost["priced_calls"] == 0 and cost["unpriced_calls"] >= 1
    assert cost["unpriced_models"] == ["my-local-model"]
    code, text = cli("--db", str(db), "traces")
    assert "no price" in text
    code, out = cli(
        "--db", str(db), "context", trace_id, "--json",
        "--set", "price.my-local-model.input=1", "--set", "price.my-local-model.output=2",
        "--set", "price.my-local-model.cache_read=0.5",
    )  # fmt: skip
    assert code == 0
    priced = json.loads(out)["cost"]
    assert priced["priced_calls"] == cost["unpriced_calls"] and priced["usd"] > 0
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"my-local-model": {"input": 1, "output": 2}}}))
    code, out = cli("--db", str(db), "traces", "--json", "--prices", str(prices))
    # the server reports cache reads after the first call, and this override names no
    # cache-read price: those calls stay unpriced, the first one is priced
    partly = json.loads(out)[0]["cost"]
    assert partly["priced_calls"] == 1 and partly["unpriced_calls"] == cost["unpriced_calls"] - 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "price.x.inptu=1"], "FIELD one of"),
        (["--set", "price.x.input=cheap"], "must be a number"),
        (["--prices", "missing.json"], "cannot read the price file"),
    ],
)
def test_bad_price_settings_are_clear_errors(
    cli: Cli, tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "e.db"
    cli("--db", str(db), "demo", "--steps", "3", "--json")
    code, _ = cli("--db", str(db), "traces", "--json", *argv)
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_compare_shows_cost_beside_tokens(
    cli: Cli, tmp_path: Path, serve: Callable[..., ModelServer]
) -> None:
    db = tmp_path / "cmp.db"
    a = _run(cli, db, serve(ScriptedModel(script(3))), "gpt-4o")
    b = _run(cli, db, serve(ScriptedModel(script(1))), "claude-sonnet-4-5-20250929")
    code, out = cli("--db", str(db), "traces", "--json")
    usd = {t["id"]: t["cost"]["usd"] for t in json.loads(out)}
    html = tmp_path / "r.html"
    code, out = cli("--db", str(db), "compare", a, b, "--html", str(html), "--json")
    assert code == 0
    summary = json.loads(out)["summary"]["cost_usd"]
    assert summary == {"a": pytest.approx(usd[a]), "b": pytest.approx(usd[b])}
    assert usd[a] and usd[b] and usd[a] != usd[b]
    assert "cost, USD" in html.read_text()
