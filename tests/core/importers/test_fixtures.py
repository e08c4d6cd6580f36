"""Edge cases per format on small hand-written fixtures (tests/fixtures/<format>/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.context.view import current_view
from core.errors import InvalidInputError
from core.importers.api import import_paths
from core.records import Message
from core.store import Store

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def _all(store: Store, trace_id: str) -> list[Message]:
    with store.read() as r:
        return list(r.all_messages(trace_id))


def _by_uuid(msgs: list[Message]) -> dict[str, Message]:
    return {
        m.metadata["uuid"]: m for m in msgs if isinstance(m.metadata, dict) and "uuid" in m.metadata
    }


# -- Claude Code ------------------------------------------------------------------------
def test_claude_code_streamed_reply_is_one_message_with_final_usage(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "claude_code/session.jsonl"])
    msgs = _by_uuid(_all(store, res.trace_id))
    reply = msgs["a1"]
    assert reply.content == "Reading the file."
    assert [p["type"] for p in reply.parts or ()] == ["thinking", "text"]
    assert [c.id for c in reply.tool_calls] == ["toolu_1"]
    assert reply.usage["output_tokens"] == 40, "usage of the last streamed record, once"
    assert reply.metadata["records"] == 3


def test_claude_code_rewind_is_a_branch_and_head_is_the_last_leaf(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "claude_code/session.jsonl"])
    msgs = _by_uuid(_all(store, res.trace_id))
    with store.read() as r:
        path = r.main_path_sequences(res.trace_id)
        head = r.message(res.trace_id, r.trace(res.trace_id).head)
    assert head.metadata["uuid"] == "a9"
    assert msgs["u2"].sequence not in path and msgs["a5"].sequence not in path, "abandoned branch"
    assert msgs["u3"].parent_sequence == msgs["r2"].sequence == msgs["u2"].parent_sequence


def test_claude_code_inline_sidechain_hangs_on_its_task_call(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "claude_code/session.jsonl"])
    assert res.subagents == 1
    msgs = _all(store, res.trace_id)
    side = [m for m in msgs if m.branch_type == "subagent"]
    assert [m.metadata.get("uuid") for m in side] == ["s1", "s2", "s3", "s4"]
    assert {m.agent_name for m in side} == {"Explore"}, "named after the Task's subagent_type"
    task = _by_uuid(msgs)["a4"]
    assert side[0].parent_sequence == task.sequence
    with store.read() as r:
        assert not set(r.main_path_sequences(res.trace_id)) & {m.sequence for m in side}


def test_claude_code_compactions_and_view(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "claude_code/session.jsonl"])
    msgs = _by_uuid(_all(store, res.trace_id))
    with store.read() as r:
        micro, full = r.compactions(res.trace_id)
        view = current_view(r, res.trace_id)
    cleared = next(i for i in micro.context_after if i.content is not None)
    assert cleared.sequence == msgs["r1"].sequence and "cleared" in cleared.content
    assert micro.tokens_before == 9000 and micro.trigger == "auto"
    assert (full.trigger, full.tokens_before) == ("manual", 12345)
    # The summary follows the boundary record on the main path; the event is anchored at it
    # (as ctxlens's own compactions are) and what left is the View at the logical parent.
    summary = msgs["cs1"]
    assert summary.branch_type is None and summary.kind == "summary"
    boundary = next(m for m in msgs.values() if m.sequence == summary.parent_sequence)
    assert boundary.content.startswith("Conversation compacted")
    assert boundary.parent_sequence == msgs["a7"].sequence, "the last main-path message before it"
    assert full.at_sequence == summary.sequence
    assert msgs["a7"].sequence in full.removed and summary.sequence not in full.removed
    assert (
        [i.sequence for i in full.context_after]
        == [msgs["cs1"].sequence]
        == [full.summary_sequence]
    )
    assert view.sequences == [msgs["cs1"].sequence, msgs["u9"].sequence, msgs["a9"].sequence]


def test_claude_code_images_titles_and_unknown_records(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "claude_code/session.jsonl"])
    msgs = _by_uuid(_all(store, res.trace_id))
    with store.read() as r:
        tr = r.trace(res.trace_id)
        (ref,) = r.refs(res.trace_id)
    assert tr.title == "Fix the parser", "summary record whose leafUuid is in the session"
    part = msgs["u2"].parts[0]
    assert part == {"type": "image", "ref": ref.id, "media_type": "image/png"}
    assert ref.source_sequence == msgs["u2"].sequence and ref.image_blocks == 1
    assert ref.content.startswith("data:image/png;base64,")
    assert any("mystery-record" in w for w in res.warnings)


def test_claude_code_subagent_file_layouts(store: Store) -> None:
    results = import_paths(store, [FIX / "claude_code/layouts"])
    by_name = {Path(r.path).name: r for r in results}
    assert set(by_name) == {"sess-2.jsonl", "agent-lone01.jsonl"}, (
        "flat agent file joins its session"
    )
    main = by_name["sess-2.jsonl"]
    assert main.subagents == 2
    msgs = _all(store, main.trace_id)
    tasks = {c.id: m.sequence for m in msgs for c in m.tool_calls}
    for agent, call in (("nest01", "toolu_n"), ("flat01", "toolu_f")):
        first = min((m for m in msgs if m.branch_id == agent), key=lambda m: m.sequence)
        assert first.parent_sequence == tasks[call] and first.agent_name == "general-purpose"
    lone = by_name["agent-lone01.jsonl"]
    assert (lone.messages, lone.subagents) == (2, 1)
    with store.read() as r:
        assert len(r.main_path_sequences(lone.trace_id)) == 2, "a lone agent file is its own trace"


# -- Codex ------------------------------------------------------------------------------
def test_codex_compaction_usage_and_duplicates(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "codex/rollout-compacted.jsonl"])
    msgs = _all(store, res.trace_id)
    assert res.compactions == 2, (
        "compacted+context_compacted is one; a lone context_compacted another"
    )
    assert any("brand_new_record" in w for w in res.warnings)
    assert sum(m.content == "The build fails on x." for m in msgs) == 1
    call = next(m for m in msgs if any(c.id == "c1" for c in m.tool_calls))
    assert call.usage["input_tokens"] == 100 and call.parts[0]["thinking"] == "Check the logs"
    with store.read() as r:
        first, second = r.compactions(res.trace_id)
    summary = next(m for m in msgs if m.kind == "summary")
    user = next(m for m in msgs if m.content == "Fix the build")
    assert [i.sequence for i in first.context_after] == [user.sequence, summary.sequence]
    assert first.tokens_before == 160, "from the last token_count"
    assert second.details["source"] == "context_compacted"
    assert any(m.content == "turn aborted: interrupted" and m.kind == "meta" for m in msgs)


# -- OpenHands --------------------------------------------------------------------------
def test_openhands_v1_condensation(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "openhands/condensation.jsonl"])
    msgs = _all(store, res.trace_id)
    reply = next(m for m in msgs if m.tool_calls)
    assert [c.id for c in reply.tool_calls] == ["t1", "t2"], "one reply per llm_response_id"
    with store.read() as r:
        (c,) = r.compactions(res.trace_id)
        view = current_view(r, res.trace_id)
    summary = next(m for m in msgs if m.kind == "summary")
    assert summary.content == "Listed three files."
    assert [i.sequence for i in c.context_after] == [0, 1, summary.sequence], "inserted at offset 2"
    assert set(c.removed) == {m.sequence for m in msgs if m.role in ("assistant", "tool")}
    assert [view.messages[s].content for s in view.sequences][-1] == "Thanks"


def test_openhands_v0_condensation_by_range(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "openhands/v0-condensation.json"])
    msgs = _all(store, res.trace_id)
    with store.read() as r:
        (c,) = r.compactions(res.trace_id)
    hello = next(m for m in msgs if m.content == "hello")
    summary = next(m for m in msgs if m.kind == "summary")
    assert [i.sequence for i in c.context_after] == [hello.sequence, summary.sequence]
    assert msgs[1].usage == {"prompt_tokens": 10, "completion_tokens": 3}


# -- Inspect ----------------------------------------------------------------------------
def test_inspect_attachments_calls_and_compaction(store: Store) -> None:
    (res,) = import_paths(store, [FIX / "inspect/compaction.json"])
    msgs = _all(store, res.trace_id)
    assert msgs[1].content == "List the files in the folder.", "attachment:// resolved"
    with store.read() as r:
        calls = r.llm_calls(res.trace_id)
        (c,) = r.compactions(res.trace_id)
        view = current_view(r, res.trace_id)
    assert [x.response_sequence for x in calls] == [2, 4, 6]
    assert calls[0].usage["raw"] == {"input_tokens": 20, "output_tokens": 5}
    assert (calls[0].usage["prompt_tokens"], calls[0].usage["completion_tokens"]) == (20, 5)
    synthetic = [i for i in calls[2].context if i.sequence is None]
    assert [i.content for i in synthetic] == ["Summary: listed two files."]
    assert c.tokens_before == 60 and c.at_sequence == 4
    assert [i.to_json() for i in view.items] == [i.to_json() for i in calls[2].context] + [6]


# -- OpenTelemetry ----------------------------------------------------------------------
def _otel_shape(store: Store, trace_id: str) -> list[tuple[Any, ...]]:
    return [
        (m.role, m.content, tuple(c.id for c in m.tool_calls), m.tool_call_id)
        for m in _all(store, trace_id)
    ]


def test_otel_current_and_old_attribute_names_agree(store: Store) -> None:
    a, b = import_paths(store, [FIX / "otel/otlp-semconv.json", FIX / "otel/otlp-lines.jsonl"])
    assert _otel_shape(store, a.trace_id) == _otel_shape(store, b.trace_id)
    shape = _otel_shape(store, a.trace_id)
    assert [s[0] for s in shape] == ["system", "user", "assistant", "tool", "assistant"]
    with store.read() as r:
        first, second = r.llm_calls(a.trace_id)
        meta = r.trace(a.trace_id).metadata
    assert first.usage["raw"] == {"input_tokens": 30, "output_tokens": 9}
    assert second.usage["raw"] == {"input_tokens": 50, "output_tokens": 7}
    assert (second.usage["prompt_tokens"], second.usage["completion_tokens"]) == (50, 7)
    assert [i.sequence for i in second.context] == [0, 1, 2, 3], (
        "old-style prompt matched, not copied"
    )
    assert meta["spans"] == 4 and meta["trace_id"] == "5b8efff798038103d269b633813fc60c"


# -- OpenAI -----------------------------------------------------------------------------
def test_openai_jsonl_one_trace_per_conversation(store: Store) -> None:
    first, second = import_paths(store, [FIX / "openai/conversations.jsonl"])
    lines = (FIX / "openai/conversations.jsonl").read_text().splitlines()
    assert [first.messages, second.messages] == [len(json.loads(x)["messages"]) for x in lines]
    msgs = _all(store, second.trace_id)
    assert msgs[2].role == "tool" and msgs[2].tool_call_id == msgs[1].tool_calls[0].id
    assert msgs[1].tool_calls[0].name == "calc", "legacy function_call"


def test_list_of_trajectories_is_one_trace_each(store: Store) -> None:
    """tau-bench's historical trajectories: a list of {task_id, reward, info, traj}."""
    path = FIX / "benchmarks/tau-bench-histories.json"
    raw = json.loads(path.read_text())
    results = import_paths(store, [path])
    assert [r.format for r in results] == ["openai"] * len(raw)
    assert [r.messages for r in results] == [len(e["traj"]) for e in raw]
    assert [r.tool_calls for r in results] == [
        sum(len(m.get("tool_calls") or []) for m in e["traj"]) for e in raw
    ]
    with store.read() as r:
        for res, e in zip(results, raw, strict=True):
            tr = r.trace(res.trace_id)
            assert tr.metadata["task_id"] == e["task_id"] and tr.metadata["reward"] == e["reward"]
            first_user = next(m["content"] for m in e["traj"] if m["role"] == "user")
            assert tr.title == first_user


def test_list_mixing_conversations_and_messages_is_refused(store: Store, tmp_path: Path) -> None:
    bad = tmp_path / "mixed.json"
    bad.write_text(
        json.dumps([[{"role": "user", "content": "a"}], {"role": "user", "content": "b"}])
    )
    with pytest.raises(InvalidInputError, match=r"mixed\.json: \[1\]: whole conversations and"):
        import_paths(store, [bad])
    assert store.traces() == []


def test_swe_agent_demonstration_history_alone(store: Store) -> None:
    """SWE-agent's demonstration files: ``{"history": [...]}`` with no trajectory or info."""
    path = FIX / "swe_agent/function_calling_simple.traj"
    history = json.loads(path.read_text())["history"]
    (res,) = import_paths(store, [path])
    assert (res.format, res.messages) == ("swe-agent", len(history))
    assert res.tool_calls == sum(len(m.get("tool_calls") or []) for m in history)
    msgs = _all(store, res.trace_id)
    want = [m["tool_call_ids"][0] for m in history if m["role"] == "tool"]
    assert [m.tool_call_id for m in msgs if m.role == "tool"] == want


def test_otel_js_span_array(store: Store) -> None:
    """Spans as the OpenTelemetry JS SDK serializes them (``spanContext``, ``[s, ns]`` times),
    here the Vercel AI SDK's that OpenInference's JS exporters read."""
    path = FIX / "otel_js/ai-generateText-doGenerate.json"
    spans = json.loads(path.read_text())
    results = import_paths(store, [path])
    assert len(results) == len({s["spanContext"]["traceId"] for s in spans})
    with store.read() as r:
        for res, sp in zip(results, sorted(spans, key=lambda s: s["startTime"]), strict=True):
            a = sp["attributes"]
            prompt = json.loads(a["ai.prompt.messages"])
            assert (res.format, res.messages, res.llm_calls) == ("otel", len(prompt) + 1, 1)
            msgs = _all(store, res.trace_id)
            assert msgs[-1].role == "assistant" and msgs[-1].content == a["ai.response.text"]
            (call,) = r.llm_calls(res.trace_id)
            assert call.model in (a["gen_ai.response.model"], a["gen_ai.request.model"])
            tr = r.trace(res.trace_id)
            assert tr.created_at == sp["startTime"][0] + sp["startTime"][1] / 1e9
            first_user = next(m for m in prompt if m["role"] == "user")["content"][0]["text"]
            assert tr.title == first_user
