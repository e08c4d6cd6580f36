"""The proxy's pure parts on real wire shapes: bodies as messages, message keys, trace
matching and stream assembly (a cut stream is kept, marked incomplete)."""

from __future__ import annotations

import json

from core.proxy.assemble import assembly_for
from core.proxy.grouping import Conversations, message_key
from core.proxy.messages import family_of, request_messages
from core.records import NewMessage, ToolCall


def test_paths_name_their_family_and_everything_else_passes_through() -> None:
    assert family_of("POST", "/v1/chat/completions") == "chat"
    assert family_of("POST", "/openai/v1/responses/") == "responses"
    assert family_of("POST", "/v1/messages") == "anthropic"
    assert family_of("POST", "/v1/messages/count_tokens") is None
    assert family_of("GET", "/v1/responses") is None


def test_anthropic_tool_results_become_tool_messages_and_system_blocks_one_prompt() -> None:
    body = {
        "system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": 1}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                    {"type": "text", "text": "and?"},
                ],
            },
        ],
    }
    got = request_messages("anthropic", body)
    assert [(m.role, m.content) for m in got] == [
        ("system", "A\n\nB"),
        ("user", "go"),
        ("assistant", ""),
        ("tool", "one"),
        ("user", "and?"),
    ]
    assert got[2].tool_calls == (ToolCall("t1", "f", '{"x": 1}'),)
    assert got[2].parts is not None and got[2].parts[0]["type"] == "thinking"


def test_responses_assistant_items_are_one_turn() -> None:
    body = {
        "instructions": "I",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "q"}]},
            {"type": "reasoning", "id": "r1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "checking"}],
            },
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
    }
    got = request_messages("responses", body)
    assert [m.role for m in got] == ["system", "user", "assistant", "tool"]
    assert got[2].content == "checking" and got[2].tool_calls[0].id == "c1"


def test_keys_ignore_argument_spacing_and_reasoning_but_not_text() -> None:
    a = NewMessage("assistant", "x", None, (ToolCall("1", "f", '{"a": 1, "b": 2}'),))
    b = NewMessage(
        "assistant",
        "x",
        ({"type": "thinking", "thinking": "t"},),
        (ToolCall("1", "f", '{"b":2,"a":1}'),),
    )
    assert message_key(a) == message_key(b)
    assert message_key(a) != message_key(NewMessage("assistant", "y", None, a.tool_calls))
    assert message_key(NewMessage("user", "x")).startswith("u:")


def test_conversations_match_extensions_retries_and_a_kept_opening() -> None:
    conv = Conversations()
    conv.add("T1", ["s:1", "u:2"])
    conv.add("T1", ["s:1", "u:2", "a:3"])
    assert conv.find(["s:1", "u:2"]) == "T1"  # a retry
    assert conv.find(["s:1", "u:2", "a:3", "t:4"]) == "T1"  # extends call + response
    assert conv.find(["s:1", "u:2", "u:9"]) == "T1"  # compacted: opening kept
    assert conv.find(["s:1", "u:5"]) is None  # same system prompt, another task
    assert conv.find(["u:7"]) is None


def _sse_chat(chunks: list[dict[str, object]]) -> list[str]:
    return [json.dumps(c) for c in chunks]


def test_a_cut_chat_stream_keeps_what_arrived_and_says_it_is_incomplete() -> None:
    asm = assembly_for("chat", "m")
    for data in _sse_chat(
        [
            {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hel"}}]},
            {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "lo"}}]},
        ]
    ):
        asm.event(None, data)
    out = asm.result()
    assert out.message is not None and out.message.content == "Hello"
    assert not out.complete


def test_anthropic_stream_with_an_error_event_is_not_complete() -> None:
    asm = assembly_for("anthropic", "c")
    asm.event("message_start", json.dumps({"type": "message_start", "message": {"id": "m1"}}))
    asm.event(
        "content_block_start",
        json.dumps(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        ),
    )
    asm.event(
        "content_block_delta",
        json.dumps(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi"},
            }
        ),
    )
    asm.event("error", json.dumps({"type": "error", "error": {"type": "overloaded_error"}}))
    out = asm.result()
    assert out.message is not None and out.message.content == "Hi"
    assert not out.complete and out.error is not None and "overloaded" in out.error
