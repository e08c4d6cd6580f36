"""The scripted model decides only from its context: it performs each step once while the
step stays visible, and redoes exactly the steps whose evidence was removed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_helpers import run

from core.llm import (
    SUMMARY_TAG,
    ChatClient,
    ChatRequest,
    ModelCallError,
    ModelCompactionSummarizer,
    ModelServer,
    Script,
    ScriptedModel,
    Step,
    read_progress,
    summarize_messages,
)
from core.llm.script import ScriptCall
from core.tokens import count_text
from tests.helpers.scripted_summarizer import ScriptedCompactionSummarizer


def _parallel(label: str, calls: list[tuple[str, dict[str, Any]]], text: str = "") -> Step:
    """A step of several tool calls in one reply (the scripted model answers them at once)."""
    return Step(label, tuple(ScriptCall.of(n, a) for n, a in calls), text)


TOOL_NAMES = ("goal", "query_events", "fetch_window", "rank")
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in TOOL_NAMES]
SCRIPT = Script(
    (
        Step.goal("P", text="Planning.", add=["Aggregate 30 days", "Rank entities"], focus="1"),
        Step.tool("S1", "query_events", text="Querying.", range="30d"),
        _parallel("S2", [("fetch_window", {"id": "win-1"}), ("fetch_window", {"id": "win-2"})]),
        Step.goal_done("D1", "1", "Aggregates queried", covers=["S1", "S2"]),
        Step.tool("S3", "rank", top=10),
        Step.final("F", "Top 10 risk entities: entity-1 (win-1), entity-2 (win-2)."),
    )
)
START = [
    {"role": "system", "content": "You are the risk analyst."},
    {"role": "user", "content": "Find the top 10 risk entities over 30 days."},
]


def tool_result(call: Any) -> str:
    return f"{call.name} ok: {call.arguments}"


async def play(client: ChatClient, messages: list[dict[str, Any]], limit: int = 20) -> list[str]:
    """A minimal agent loop: call, execute every tool call, repeat until a final answer."""
    performed: list[str] = []
    for _ in range(limit):
        resp = await client.complete(messages, tools=TOOLS)
        messages.append(resp.to_openai())
        if not resp.tool_calls:
            performed.append("final")
            return performed
        performed.append(resp.tool_calls[0].id.split("_")[1])
        for call in resp.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": tool_result(call)})
    raise AssertionError("no final answer")


def full_run(server: ModelServer, stream: bool = True) -> tuple[list[str], list[dict[str, Any]]]:
    async def go() -> tuple[list[str], list[dict[str, Any]]]:
        messages = [dict(m) for m in START]
        async with ChatClient(server.settings(stream=stream)) as client:
            return await play(client, messages), messages

    return run(go())


@pytest.fixture
def scripted_server(serve: Any) -> ModelServer:
    return serve(ScriptedModel(SCRIPT))


def test_a_full_run_does_every_step_once(scripted_server: ModelServer) -> None:
    performed, messages = full_run(scripted_server)
    assert performed == ["P", "S1", "S2", "D1", "S3", "final"]
    assert messages[-1]["content"] == SCRIPT.steps[-1].text
    parallel = [
        m for m in messages if m["role"] == "assistant" and len(m.get("tool_calls", [])) > 1
    ]
    assert len(parallel) == 1
    args = [json.loads(c["function"]["arguments"]) for c in parallel[0]["tool_calls"]]
    assert args == [{"id": "win-1"}, {"id": "win-2"}]


def test_runs_are_deterministic_streamed_or_not(serve: Any) -> None:
    a = full_run(serve(ScriptedModel(SCRIPT)), stream=True)[1]
    b = full_run(serve(ScriptedModel(SCRIPT)), stream=False)[1]
    assert a == b


def reply_to(messages: list[dict[str, Any]], model: ScriptedModel | None = None) -> Any:
    request = ChatRequest(model="m", messages=tuple(messages), tools=tuple(TOOLS))
    return (model or ScriptedModel(SCRIPT)).reply(request)


def drop_step(messages: list[dict[str, Any]], label: str) -> list[dict[str, Any]]:
    """Remove the assistant message of step ``label`` and its tool results."""
    ids: set[str] = set()
    out = []
    for m in messages:
        calls = [c["id"] for c in m.get("tool_calls") or ()]
        if any(c.startswith(f"sc_{label}_") for c in calls):
            ids.update(calls)
            continue
        if m.get("tool_call_id") in ids:
            continue
        out.append(m)
    return out


@pytest.fixture
def transcript() -> list[dict[str, Any]]:
    return _transcript()


def build_transcript() -> list[dict[str, Any]]:
    """The messages of a full in-process run, up to (not including) the final answer."""
    model, messages = ScriptedModel(SCRIPT), [dict(m) for m in START]
    while True:
        reply = reply_to(messages, model)
        if not reply.tool_calls:
            return messages
        messages.append(
            {
                "role": "assistant",
                "content": reply.text,
                "tool_calls": [c.to_openai() for c in reply.tool_calls],
            }
        )
        for c in reply.tool_calls:
            messages.append({"role": "tool", "tool_call_id": c.id, "content": tool_result(c)})


def test_never_redoes_a_visible_step(transcript: list[dict[str, Any]]) -> None:
    for cut in range(len(transcript) + 1):
        prefix = transcript[:cut]
        reply = reply_to(prefix)
        done = set(read_progress(prefix).done_labels())
        performed = reply.tool_calls[0].id.split("_")[1] if reply.tool_calls else "final"
        assert performed not in done


def test_redoes_a_step_whose_result_left_the_context(transcript: list[dict[str, Any]]) -> None:
    without_s3 = drop_step(transcript, "S3")
    assert reply_to(without_s3).tool_calls[0].id.startswith("sc_S3_")
    # S1 and S2 are covered by the visible goal(done) summary: not redone
    assert not reply_to(drop_step(transcript, "S1")).tool_calls
    # without the goal(done) call as well, S1 is lost and gets redone
    lost = drop_step(drop_step(transcript, "S1"), "D1")
    redo = reply_to(lost)
    assert redo.tool_calls[0].id.startswith("sc_S1_")
    assert json.loads(redo.tool_calls[0].arguments) == {"range": "30d"}


def test_a_placeholder_result_still_counts(transcript: list[dict[str, Any]]) -> None:
    micro = [
        {**m, "content": "[Previous: used query_events]"} if m.get("role") == "tool" else m
        for m in drop_step(transcript, "D1")
    ]
    # S1 and S2 show only placeholders now, yet count as done: the next step is D1 again
    assert reply_to(micro).tool_calls[0].id.startswith("sc_D1_")


def test_summary_keeps_steps_done_and_a_lossy_one_does_not(
    transcript: list[dict[str, Any]],
) -> None:
    for label in ("S1", "S2", "S3"):
        assert f"[done {label}]" in summarize_messages(transcript)
    for summary, redo in [
        (narrate(ScriptedCompactionSummarizer(), transcript), None),
        (narrate(ScriptedCompactionSummarizer(omit_completed=True), transcript), "P"),
    ]:
        rebuilt = [*START, {"role": "user", "content": summary}]
        reply = reply_to(rebuilt)
        if redo is None:
            assert not reply.tool_calls
        else:
            assert reply.tool_calls[0].id.startswith(f"sc_{redo}_")


@settings(max_examples=150, deadline=None)
@given(st.sets(st.sampled_from(["P", "S1", "S2", "S3"])))
def test_next_step_is_the_first_removed_one(removed: set[str]) -> None:
    messages = _transcript()
    for label in removed | {"D1"}:  # D1 would mark S1/S2 done; remove it to test results
        messages = drop_step(messages, label)
    order = ["P", "S1", "S2", "D1", "S3"]
    expected = next(label for label in order if label in removed | {"D1"})
    reply = reply_to(messages)
    assert reply.tool_calls[0].id.startswith(f"sc_{expected}_")


_CACHE: list[list[dict[str, Any]]] = []


def _transcript() -> list[dict[str, Any]]:
    if not _CACHE:
        _CACHE.append(build_transcript())
    return [dict(m) for m in _CACHE[0]]


@dataclass(frozen=True)
class Request:
    """Stands in for the context engine's SummaryRequest (same fields and method)."""

    stage: str
    messages: tuple[dict[str, Any], ...]
    max_tokens: int = 1200

    def prompt_messages(self) -> list[dict[str, Any]]:
        head = {"role": "system", "content": "You summarize an agent's work."}
        ask = {"role": "user", "content": f"Write a narrative. Stay under {self.max_tokens}."}
        return [head, *self.messages, ask]


def narrate(summarizer: Any, messages: list[dict[str, Any]], max_tokens: int = 1200) -> str:
    return str(run(summarizer.summarize(Request("compression", tuple(messages), max_tokens))))


def test_summary_requests_over_http_match_the_in_process_summary(
    scripted_server: ModelServer, transcript: list[dict[str, Any]]
) -> None:
    async def go(max_tokens: int) -> str:
        async with ChatClient(scripted_server.settings()) as client:
            summarizer = ModelCompactionSummarizer(client)
            request = Request("compression", tuple(transcript), max_tokens)
            return await summarizer.summarize(request)

    for budget in (1200, 30):
        over_http = run(go(budget))
        assert over_http == narrate(ScriptedCompactionSummarizer(), transcript, budget)
        assert count_text(over_http) <= budget
    sent = scripted_server.requests[-1]
    assert sent.messages[-1]["content"].startswith(SUMMARY_TAG)


def test_a_tight_budget_keeps_the_markers_first(transcript: list[dict[str, Any]]) -> None:
    full = summarize_messages(transcript)
    tight = summarize_messages(transcript, max_tokens=count_text(full) - 1)
    assert count_text(tight) < count_text(full)
    for label in ("P", "S1", "S2", "D1", "S3"):
        assert f"[done {label}]" in tight
    tiny = summarize_messages(transcript, max_tokens=40)
    assert count_text(tiny) <= 40 and "more)" in tiny


def test_other_stages_get_notes(transcript: list[dict[str, Any]]) -> None:
    notes = run(ScriptedCompactionSummarizer().summarize(Request("reflection", tuple(transcript))))
    assert notes.startswith("- ") and "[done" not in notes


def test_script_selected_by_system_prompt() -> None:
    verifier = Script(
        (Step.tool("V1", "fetch_window", id="win-9"), Step.final("VF", "ok")),
        name="verifier",
        match="evidence verifier",
    )
    model = ScriptedModel(SCRIPT, verifier)
    sub = [{"role": "system", "content": "You are the evidence verifier."}, START[1]]
    assert reply_to(sub, model).tool_calls[0].id.startswith("sc_V1_")
    assert reply_to(list(START), model).tool_calls[0].id.startswith("sc_P_")


def test_without_tools_it_gives_the_final_answer() -> None:
    model = ScriptedModel(SCRIPT)
    for request in [
        ChatRequest(model="m", messages=tuple(START)),
        ChatRequest(model="m", messages=tuple(START), tools=tuple(TOOLS), tool_choice="none"),
    ]:
        reply = model.reply(request)
        assert reply.tool_calls == () and reply.text == SCRIPT.steps[-1].text


def test_a_tool_not_offered_is_a_server_error(scripted_server: ModelServer) -> None:
    async def go() -> None:
        async with ChatClient(scripted_server.settings()) as client:
            with pytest.raises(ModelCallError, match="query_events"):
                await client.complete([*START, *_transcript()[2:4]], tools=[TOOLS[0]])

    run(go())


def test_script_validation() -> None:
    with pytest.raises(ValueError, match="bad step label"):
        Script((Step.tool("S_1", "x"),))
    with pytest.raises(ValueError, match="repeat"):
        Script((Step.tool("A", "x"), Step.tool("A", "y")))
    with pytest.raises(ValueError, match="only the last"):
        Script((Step.final("F", "x"), Step.tool("A", "y")))
