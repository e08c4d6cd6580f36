"""The main agent is the one on no side branch, whatever its name (h13d, item 1), and the
comparison says where each call's input tokens come from (item 2): ``ctxlens compare``,
``replay`` and ``context`` on real imports whose main agent is not named "main".

any-agent names its one agent ``any_agent``: ``compare`` found 0 main calls in it (so 0
pairs, 0 input tokens) and ``replay`` refused every call as "a call of subagent any_agent".
pydantic-ai's run names its agent ``joke_agent``: once replay accepted it, a new turn after
the copied prefix lost every copied message (the runner kept only messages named "main").

Expectations come from the raw files (plain ``json``): the call spans and their
``gen_ai.usage.input_tokens``, the generations under each agent run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]
ANY_AGENT = TRACES / "otel_genai/mozilla-ai__any-agent/tests/assets/OPENAI_trace.json"
PYDANTIC = (
    TRACES / "otel_genai/langfuse__langfuse/worker/src/__tests__/chatml/framework-traces"
    / "pydantic-ai-tools-2025-12-04.trace.json"
)  # fmt: skip
NO_CALLS = (
    TRACES / "chat_messages/OpenHands__software-agent-sdk/tests/fixtures/llm_data"
    / "fncall-llm-message.json"
)  # fmt: skip
pytestmark = pytest.mark.skipif(
    not (ANY_AGENT.is_file() and PYDANTIC.is_file() and NO_CALLS.is_file()),
    reason="shared/traces not present",
)


def any_agent_inputs() -> list[int]:
    """The recorded input tokens of each model call span of the any-agent run, in order."""
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    calls = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "call_llm"]
    return [int(s["attributes"]["gen_ai.usage.input_tokens"]) for s in calls]


def generations_by_agent() -> dict[str, int]:
    """pydantic-ai: model calls (GENERATION observations) under each agent's runs."""
    obs = json.loads(PYDANTIC.read_text(encoding="utf-8"))["observations"]
    runs = {o["id"]: o["name"].removesuffix(" run") for o in obs if o["name"].endswith(" run")}
    out: dict[str, int] = {}
    for o in obs:
        if o["type"] == "GENERATION":
            agent = runs[o["parentObservationId"]]
            out[agent] = out.get(agent, 0) + 1
    return out


def _import(cli: Cli, db: Path, path: Path) -> str:
    code, out = cli("--db", str(db), "import", str(path), "--json")
    assert code == 0, out
    (res,) = json.loads(out)
    return str(res["trace_id"])


def _json(cli: Cli, *argv: str) -> Any:
    code, out = cli(*argv, "--json")
    assert code == 0, out
    return json.loads(out)


def test_compare_finds_the_calls_of_an_agent_not_named_main(cli: Cli, tmp_path: Path) -> None:
    inputs = any_agent_inputs()
    assert len(inputs) == 3
    db = tmp_path / "s.db"
    tid = _import(cli, db, ANY_AGENT)
    data = _json(cli, "--db", str(db), "compare", tid, tid)
    assert data["summary"]["main_calls"] == {"a": 3, "b": 3}  # was 0 / 0
    assert [p["k"] for p in data["calls"]] == [0, 1, 2]
    assert all(p["same"] for p in data["calls"])
    assert data["a"]["metrics"]["main_llm_calls"] == 3  # was 0
    # item 2: the model's usage, named as such
    assert data["a"]["input_tokens"] == inputs
    assert data["a"]["input_basis"] == ["recorded"] * 3
    assert [p["a_tokens_basis"] for p in data["calls"]] == ["recorded"] * 3
    assert data["summary"]["input_basis"]["a"] == {"recorded": 3, "counted": 0}
    assert data["summary"]["input_tokens"]["a"] == sum(inputs)


def test_replay_and_compare_an_agent_not_named_main(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = _import(cli, db, ANY_AGENT)
    replayed = _json(cli, "--db", str(db), "replay", tid, "--from-call", "1")  # was exit 2
    assert replayed["start"] == "call" and replayed["diverged_at"] is None
    data = _json(cli, "--db", str(db), "compare", tid, replayed["trace_id"])
    assert data["summary"]["main_calls"] == {"a": 3, "b": 3}
    assert data["summary"]["same_context_calls"] == 3
    # from the start: a fresh turn under ctxlens's runtime, with the run's own system
    # prompt (docs/replay.md; it took ctxlens's default prompt instead)
    spans = json.loads(ANY_AGENT.read_text(encoding="utf-8"))["spans"]
    first = json.loads(spans[0]["attributes"]["gen_ai.input.messages"])[0]
    assert first["role"] == "system"
    fresh = _json(cli, "--db", str(db), "replay", tid)
    assert fresh["start"] == "fresh" and fresh["main_llm_calls"] == 3
    sent = _json(cli, "--db", str(db), "context", fresh["trace_id"], "--call", "0")
    assert sent["messages"][0]["role"] == "system"
    assert sent["messages"][0]["content"].startswith(first["content"] + "\n\n## Tools")


def test_a_replayed_turn_keeps_the_copied_history(cli: Cli, tmp_path: Path) -> None:
    """pydantic-ai: the joke agent's two runs are one conversation; the evaluator is a
    subagent. Replayed from its second call, the second run's call must see the copied
    first run (it saw only the system prompt, its own answer and the new user message)."""
    per_agent = generations_by_agent()
    assert per_agent == {"joke_agent": 3, "evaluator_agent": 1}
    db = tmp_path / "s.db"
    tid = _import(cli, db, PYDANTIC)
    replayed = _json(cli, "--db", str(db), "replay", tid, "--from-call", "1")
    data = _json(cli, "--db", str(db), "compare", tid, replayed["trace_id"])
    assert data["summary"]["main_calls"]["a"] == per_agent["joke_agent"]
    assert data["summary"]["main_calls"]["b"] == per_agent["joke_agent"]
    assert [p["same"] for p in data["calls"]] == [True, True, True]
    last_a, last_b = data["a"]["call_indexes"][-1], data["b"]["call_indexes"][-1]
    src = _json(cli, "--db", str(db), "context", tid, "--call", str(last_a))
    new = _json(cli, "--db", str(db), "context", replayed["trace_id"], "--call", str(last_b))
    assert len(new["messages"]) == len(src["messages"]) == 8
    assert new["request_sha256"] == src["request_sha256"]


def test_compare_labels_counted_inputs(cli: Cli, tmp_path: Path) -> None:
    """A message list records no call and no usage: its inputs are ctxlens's count, and the
    JSON, the HTML report and the text line say so beside the recorded ones."""
    db = tmp_path / "s.db"
    a = _import(cli, db, ANY_AGENT)
    b = _import(cli, db, NO_CALLS)
    page = tmp_path / "report.html"
    data = _json(cli, "--db", str(db), "compare", a, b, "--html", str(page))
    replies = [
        m for m in json.loads(NO_CALLS.read_text(encoding="utf-8")) if m["role"] == "assistant"
    ]
    assert data["b"]["input_basis"] == ["counted"] * len(replies)
    assert data["summary"]["input_basis"] == {
        "a": {"recorded": 3, "counted": 0},
        "b": {"recorded": 0, "counted": len(replies)},
    }
    calls = data["calls"]
    assert [p["a_tokens_basis"] for p in calls] == ["recorded"] * 3 + [None] * (len(calls) - 3)
    assert [p["b_tokens_basis"] for p in calls] == ["counted"] * len(replies)
    text = page.read_text(encoding="utf-8")
    first = calls[0]
    assert f"<td>{first['a_tokens']:,} (recorded)</td>" in text
    assert f"<td>{first['b_tokens']:,} (counted)</td>" in text
    assert f"{data['summary']['input_tokens']['b']:,} (counted)" in text
    code, line = cli("--db", str(db), "compare", a, b)
    assert code == 0 and "(recorded / counted; B/A " in line, line
