"""``ctxlens proxy`` with the official openai and anthropic SDKs against a loopback fake
upstream: what the client gets is what the upstream sent, what the store gets is the body
byte for byte plus the assembled response, and calls group into traces by conversation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import anthropic
import openai

from core.inspector.context_report import call_diff, call_report
from core.records import ToolCall
from core.store import Store
from tests.core.proxy.conftest import context
from tests.helpers.proxy_process import ProxyProcess
from tests.servers.fake_upstream import FakeUpstream, Reply

KEY = "sk-test-0123456789abcdef"
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


def _openai(proxy: ProxyProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY, max_retries=0)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_chat_stream_tool_call_then_result_is_one_trace(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    call = ToolCall("call_7", "lookup", '{"q": "risk"}')
    upstream.replies.extend([Reply("Looking it up.", (call,)), Reply("Risk is low.")])
    client = _openai(proxy)
    history: list[dict[str, object]] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is the risk?"},
    ]
    stream = client.chat.completions.create(
        model="gpt-test",
        messages=history,
        tools=TOOLS,
        stream=True,  # type: ignore[arg-type]
    )
    text, args = "", ""
    for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        text += (delta.content or "") if delta else ""
        for tc in (delta.tool_calls or []) if delta else []:
            args += tc.function.arguments or "" if tc.function else ""
    assert (text, json.loads(args)) == ("Looking it up.", {"q": "risk"})
    history += [
        {"role": "assistant", "content": text, "tool_calls": [call.to_openai()]},
        {"role": "tool", "tool_call_id": "call_7", "content": "low"},
    ]
    reply = client.chat.completions.create(model="gpt-test", messages=history)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "Risk is low."

    first, second = proxy.calls(2)
    assert first["trace"] == second["trace"] and (first["call"], second["call"]) == (0, 1)
    assert first["outcome"] == second["outcome"] == "done" and first["complete"]

    ctx0 = context(db, first["trace"], 0)
    assert [m["role"] for m in ctx0["messages"]] == ["system", "user"]
    assert ctx0["recorded_sha256"] == _sha(upstream.requests[0].body)
    assert ctx0["proxy_request"]["body"].encode() == upstream.requests[0].body
    assert ctx0["proxy_request"]["sha256_ok"] is True
    assert ctx0["request_sha256"] == ctx0["recorded_sha256"], "the hash is of the body sent"

    ctx1 = context(db, first["trace"], 1)
    roles = [m["role"] for m in ctx1["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assistant = ctx1["messages"][2]
    assert assistant["content"] == "Looking it up."
    assert assistant["tool_calls"][0]["function"]["name"] == "lookup"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"q": "risk"}
    assert ctx1["recorded_sha256"] == _sha(upstream.requests[1].body)


def test_responses_stream_and_function_call_output(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    call = ToolCall("call_r1", "lookup", '{"q": "x"}')
    upstream.replies.extend([Reply("Checking.", (call,)), Reply("Done: x.")])
    client = _openai(proxy)
    with client.responses.stream(model="gpt-r", instructions="Be brief.", input="Find x") as s:
        final = s.get_final_response()
    assert final.output_text == "Checking."
    items: list[object] = [{"role": "user", "content": "Find x"}]
    items += [o.model_dump(exclude_none=True) for o in final.output]
    items.append({"type": "function_call_output", "call_id": "call_r1", "output": "x=1"})
    plain = client.responses.create(model="gpt-r", instructions="Be brief.", input=items)  # type: ignore[arg-type]
    assert plain.output_text == "Done: x."

    first, second = proxy.calls(2)
    assert first["trace"] == second["trace"], "the second request extends the first"
    ctx = context(db, first["trace"], 1)
    assert [m["role"] for m in ctx["messages"]] == ["system", "user", "assistant", "tool"]
    assert ctx["messages"][2]["tool_calls"][0]["id"] == "call_r1"
    assert ctx["proxy_request"]["body"].encode() == upstream.requests[1].body


def test_anthropic_stream_tool_use_then_plain_tool_result(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    call = ToolCall("toolu_1", "lookup", '{"q": "y"}')
    upstream.replies.extend([Reply("Let me see.", (call,)), Reply("y is 2.")])
    client = anthropic.Anthropic(base_url=proxy.url, api_key=KEY, max_retries=0)
    messages: list[dict[str, object]] = [{"role": "user", "content": "What is y?"}]
    with client.messages.stream(
        model="claude-t",
        max_tokens=64,
        system="Answer.",
        messages=messages,  # type: ignore[arg-type]
    ) as s:
        first_msg = s.get_final_message()
    assert [b.type for b in first_msg.content] == ["text", "tool_use"]
    messages.append({"role": "assistant", "content": [b.model_dump() for b in first_msg.content]})
    messages.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}],
        }
    )
    second_msg = client.messages.create(
        model="claude-t",
        max_tokens=64,
        system="Answer.",
        messages=messages,  # type: ignore[arg-type]
    )
    assert second_msg.content[0].text == "y is 2."  # type: ignore[union-attr]

    first, second = proxy.calls(2)
    assert first["trace"] == second["trace"]
    ctx = context(db, first["trace"], 1)
    assert [m["role"] for m in ctx["messages"]] == ["system", "user", "assistant", "tool"]
    assert ctx["messages"][3]["tool_call_id"] == "toolu_1"
    assert ctx["proxy_request"]["sha256_ok"] and ctx["proxy_request"]["api"] == "anthropic"


def test_trace_header_and_context_diff_show_what_the_agent_dropped(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    client = _openai(proxy).with_options(default_headers={"X-Ctxlens-Trace": "my-run"})
    long = [{"role": "user", "content": f"step {i}"} for i in range(4)]
    client.chat.completions.create(model="m", messages=long)  # type: ignore[arg-type]
    trimmed = [long[0], {"role": "user", "content": "summary of steps 1-2"}, long[3]]
    client.chat.completions.create(model="m", messages=trimmed)  # type: ignore[arg-type]
    a, b = proxy.calls(2)
    assert a["trace"] == b["trace"] == "my-run"
    before, after = context(db, "my-run", 0), context(db, "my-run", 1)
    assert [m["content"] for m in before["messages"]] == [f"step {i}" for i in range(4)]
    assert [m["content"] for m in after["messages"]] == ["step 0", "summary of steps 1-2", "step 3"]
    assert "x-ctxlens-trace" not in upstream.requests[0].headers
    with Store.open(db) as store, store.read() as r:
        diff = call_diff(r, "my-run", 0)  # what the inspector's diff pane shows
        assert diff is not None
        assert [row.preview for row in diff.left] == ["step 1", "step 2"]
        assert [row.preview for row in diff.entered] == ["summary of steps 1-2"]
        assert diff.kept == 2
        assert call_report(r, r.llm_call("my-run", 1)).matches_record is True


def test_unrelated_requests_are_separate_traces_and_other_paths_pass_through(
    proxy: ProxyProcess, upstream: FakeUpstream
) -> None:
    client = _openai(proxy)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "one"}])
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "two"}])
    models = client.models.list()
    assert [m.id for m in models.data] == ["m"]
    a, b = proxy.calls(2)
    assert a["trace"] != b["trace"]
    assert [r.path for r in upstream.requests] == ["/v1/chat/completions"] * 2 + ["/v1/models"]


def test_parallel_streams_are_recorded_apart(proxy: ProxyProcess, upstream: FakeUpstream) -> None:
    from concurrent.futures import ThreadPoolExecutor

    client = _openai(proxy)

    def ask(i: int) -> str:
        upstream.replies.append(Reply(f"answer {i} " * 5))
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": f"question {i}"}], stream=True
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(ask, range(4)))
    assert all(a.startswith("answer ") for a in answers)
    events = proxy.calls(4)
    assert len({e["trace"] for e in events}) == 4
    assert all(e["outcome"] == "done" and e["complete"] for e in events)


def test_curl_with_expect_100_continue(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    import shutil
    import subprocess

    if shutil.which("curl") is None:
        return
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 4000}]})
    done = subprocess.run(
        [
            "curl",
            "-sS",
            "--max-time",
            "20",
            "-H",
            "Expect: 100-continue",
            "-H",
            "content-type: application/json",
            "--data-binary",
            "@-",
            proxy.url + "/v1/chat/completions",
        ],
        input=body,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["choices"][0]["message"]["content"] == "ok"
    (event,) = proxy.calls(1)
    assert context(db, event["trace"], 0)["proxy_request"]["body"] == body


def test_responses_previous_response_id_continues_the_stored_conversation(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    call = ToolCall("call_p1", "lookup", '{"q": "z"}')
    upstream.replies.extend([Reply("Checking z.", (call,)), Reply("z is 3.")])
    client = _openai(proxy)
    first = client.responses.create(model="gpt-r", instructions="Be brief.", input="Find z")
    output = {"type": "function_call_output", "call_id": "call_p1", "output": "3"}
    second = client.responses.create(
        model="gpt-r",
        instructions="Be brief.",
        previous_response_id=first.id,
        input=[output],  # type: ignore[list-item]
    )
    assert second.output_text == "z is 3."
    a, b = proxy.calls(2)
    assert a["trace"] == b["trace"], "previous_response_id names the earlier call's trace"
    ctx = context(db, b["trace"], 1)
    assert [m["role"] for m in ctx["messages"]] == ["system", "user", "assistant", "tool"]
    assert ctx["messages"][2]["tool_calls"][0]["id"] == "call_p1"
    assert json.loads(ctx["proxy_request"]["body"])["input"] == [output], "the body as sent"
    with Store.open(db) as store, store.read() as r:
        params = r.llm_call(b["trace"], 1).params
    assert params["proxy"]["previous_response_id"] == first.id
