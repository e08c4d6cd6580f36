"""The chat client against a real server on 127.0.0.1: plain and streamed, tool calls,
usage, events, settings and key handling."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from llm_helpers import run

from core.llm import (
    BackendReply,
    ChatClient,
    ChatRequest,
    ModelCallError,
    ModelConfigError,
    ModelServer,
    ModelSettings,
    Secret,
    TextDelta,
    ToolCallDelta,
    redact,
)
from core.records import ToolCall

USER = [{"role": "user", "content": "hello"}]


class Fixed:
    """A backend that always gives the same reply, and remembers what it was asked."""

    def __init__(self, reply: BackendReply) -> None:
        self.reply_value = reply
        self.seen: list[ChatRequest] = []

    def reply(self, request: ChatRequest) -> BackendReply:
        self.seen.append(request)
        return self.reply_value


PARALLEL = BackendReply(
    text="Looking at both files now, then I will compare them line by line.",
    tool_calls=(
        ToolCall("call_a", "read_file", json.dumps({"path": "/tmp/a.txt", "lines": [1, 200]})),
        ToolCall("call_b", "read_file", json.dumps({"path": "/tmp/b ü.txt", "note": "x" * 70})),
        ToolCall("call_c", "search", "{}"),
    ),
)


@pytest.mark.parametrize("stream", [False, True])
def test_parallel_tool_calls_arrive_whole(serve: Callable[..., ModelServer], stream: bool) -> None:
    server = serve(Fixed(PARALLEL), args_chunk=5, text_chunk=7)

    async def go() -> None:
        async with ChatClient(server.settings("m1")) as client:
            resp = await client.complete(USER, tools=[_tool("read_file")], stream=stream)
        assert resp.text == PARALLEL.text
        assert resp.tool_calls == PARALLEL.tool_calls
        assert resp.finish_reason == "tool_calls"
        assert resp.model == "m1"
        assert resp.streamed is stream
        assert resp.latency_ms > 0

    run(go())


def test_stream_events_rebuild_the_message(serve: Callable[..., ModelServer]) -> None:
    server = serve(Fixed(PARALLEL), args_chunk=3, text_chunk=4)
    events: list[object] = []

    async def go() -> None:
        async with ChatClient(server.settings()) as client:
            resp = await client.complete(USER, on_event=events.append)
        texts = [e.text for e in events if isinstance(e, TextDelta)]
        assert len(texts) > 1 and "".join(texts) == resp.text
        frags = [e for e in events if isinstance(e, ToolCallDelta)]
        for i, call in enumerate(resp.tool_calls):
            mine = [f for f in frags if f.index == i]
            assert mine[0].id == call.id and mine[0].name == call.name
            assert "".join(f.arguments for f in mine) == call.arguments
        assert resp.first_token_ms is not None and resp.first_token_ms <= resp.latency_ms

    run(go())


def test_usage_reports_cached_prefix_tokens(serve: Callable[..., ModelServer]) -> None:
    server = serve()
    first = [{"role": "system", "content": "You are terse. " * 50}, *USER]
    second = [*first, {"role": "assistant", "content": "hi"}, {"role": "user", "content": "more"}]

    async def go() -> None:
        async with ChatClient(server.settings()) as client:
            a = await client.complete(first)
            b = await client.complete(second, stream=False)
        assert a.cached_tokens == 0
        # the shared prefix is the two first messages: their tokens, counted independently
        meter = server.meter
        expected = sum(meter.message_tokens(m) for m in first)
        assert b.cached_tokens == expected
        assert b.prompt_tokens is not None and b.prompt_tokens > expected
        assert b.usage is not None and b.usage["total_tokens"] == (
            b.prompt_tokens + (b.completion_tokens or 0)
        )

    run(go())


def test_streamed_call_without_usage_option_has_no_usage(
    serve: Callable[..., ModelServer],
) -> None:
    server = serve()

    async def go() -> None:
        settings = ModelSettings(server.url, "m", include_usage=False)
        async with ChatClient(settings) as client:
            resp = await client.complete(USER)
        assert resp.usage is None and resp.text == "echo: hello"

    run(go())


def test_request_body_carries_tools_params_and_stream_options(
    serve: Callable[..., ModelServer],
) -> None:
    backend = Fixed(BackendReply(text="ok"))
    server = serve(backend)

    async def go() -> None:
        async with ChatClient(server.settings("base")) as client:
            await client.complete(
                USER,
                model="other",
                tools=[_tool("t")],
                tool_choice="auto",
                params={"temperature": 0},
            )
        body = backend.seen[-1].body
        assert body["model"] == "other" and body["temperature"] == 0
        assert body["tool_choice"] == "auto" and body["tools"][0]["function"]["name"] == "t"
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}

    run(go())


def test_key_is_sent_on_a_shared_http_client_too(serve: Callable[..., ModelServer]) -> None:
    """A client of its own carries the key in its headers; an httpx client passed in is
    shared (it may talk to other endpoints), so the key goes with each request, plain
    and streamed, and the shared client's own headers stay without it."""
    import httpx

    key = "sk-shared-0123456789abcdef"
    server = serve(api_key=key)
    settings = ModelSettings(server.url, "m", api_key=Secret(key))

    async def go() -> None:
        async with httpx.AsyncClient() as http:
            client = ChatClient(settings, http=http)
            assert (await client.complete(USER, stream=False)).text == "echo: hello"
            assert (await client.complete(USER, stream=True)).text == "echo: hello"
            assert "authorization" not in http.headers
            await client.aclose()
            assert not http.is_closed  # not ours to close

    run(go())


def test_key_is_sent_but_never_shown(serve: Callable[..., ModelServer]) -> None:
    key = "sk-test-0123456789abcdefXYZ"
    server = serve(api_key=key)
    settings = ModelSettings.resolve(env={"CTXLENS_API_KEY": key}, base_url=server.url, model="m")

    async def go() -> None:
        async with ChatClient(settings) as client:
            ok = await client.complete(USER)
            assert ok.text == "echo: hello"
            assert key not in repr(ok)
            assert key not in repr(client)
        wrong = ModelSettings(server.url, "m", api_key=Secret(key + "-wrong"))
        async with ChatClient(wrong) as client:
            with pytest.raises(ModelCallError) as info:
                await client.complete(USER)
        err = info.value
        assert err.status == 401
        # the server echoed the wrong key verbatim; nothing of it may come back to us
        for text in (str(err), repr(err), err.message, json.dumps(err.to_json())):
            assert key not in text

    run(go())
    for text in (repr(settings), str(settings), json.dumps(settings.public_dict())):
        assert key not in text
    assert settings.public_dict()["has_api_key"] is True
    with pytest.raises(TypeError):
        json.dumps({"k": settings.api_key})


def test_redact_masks_known_and_key_shaped_secrets() -> None:
    assert redact("token abcdefgh here", ["abcdefgh"]) == "token *** here"
    assert "sk-proj-AAAABBBBCCCC" not in redact("bad key sk-proj-AAAABBBBCCCC given")
    assert "Bearer ***" in redact("header was Bearer abc.def-ghi_jkl")
    assert redact("nothing secret") == "nothing secret"


def test_settings_resolution_order() -> None:
    env = {
        "CTXLENS_BASE_URL": "http://env/v1",
        "CTXLENS_MODEL": "env-model",
        "OPENAI_API_KEY": "sk-from-openai-env",
        "FALLBACK_MODEL": "fb",
    }
    s = ModelSettings.resolve({"model": "file-model"}, env=env)
    assert (s.base_url, s.model, s.fallback_model) == ("http://env/v1", "file-model", "fb")
    assert s.api_key is not None and s.api_key.reveal() == "sk-from-openai-env"
    s2 = ModelSettings.resolve({"model": "file-model"}, env=env, model="arg-model")
    assert s2.model == "arg-model"
    env2 = {**env, "CTXLENS_API_KEY": "sk-ctxlens-first"}
    assert ModelSettings.resolve(env=env2).api_key == Secret("sk-ctxlens-first")
    with pytest.raises(ModelConfigError, match="CTXLENS_BASE_URL"):
        ModelSettings.resolve(env={})
    with pytest.raises(ModelConfigError, match="CTXLENS_MODEL"):
        ModelSettings.resolve(env={"CTXLENS_BASE_URL": "http://x"})
    assert s.chat_url == "http://env/v1/chat/completions"


def test_invalid_tool_pairing_is_a_400_like_openai(serve: Callable[..., ModelServer]) -> None:
    server = serve()
    orphan = [*USER, {"role": "tool", "tool_call_id": "nope", "content": "x"}]

    async def go() -> None:
        async with ChatClient(server.settings()) as client:
            with pytest.raises(ModelCallError) as info:
                await client.complete(orphan)
        assert info.value.status == 400 and "preceeding message with 'tool_calls'" in str(
            info.value
        )

    run(go())


def test_connection_refused_is_classified() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def go() -> None:
        async with ChatClient(ModelSettings(f"http://127.0.0.1:{port}/v1", "m")) as client:
            with pytest.raises(ModelCallError) as info:
                await client.complete(USER)
        assert info.value.detail == "connect_failed"

    run(go())


def test_to_message_and_openai_shape() -> None:
    from core.llm import ModelResponse

    resp = ModelResponse("hi", PARALLEL.tool_calls, {"prompt_tokens": 3}, "m", 1.0, "tool_calls")
    msg = resp.to_message(goal_id="1")
    assert msg.role == "assistant" and msg.tool_calls == PARALLEL.tool_calls
    assert msg.goal_id == "1" and msg.usage == {"prompt_tokens": 3}
    assert resp.to_openai()["tool_calls"][0]["function"]["name"] == "read_file"
    assert resp.prompt_tokens == 3 and resp.cached_tokens is None and not resp.truncated


def _tool(name: str) -> dict[str, object]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def test_credentials_in_the_base_url_are_dropped_for_the_key(
    serve: Callable[..., ModelServer], caplog: pytest.LogCaptureFixture
) -> None:
    """``http://user:pass@host`` would go out as Basic auth in place of the key (issue 18):
    the user info is removed with one warning, and the configured key is sent."""
    key = "sk-test-configured-key-0123"
    server = serve(api_key=key)
    with_user = server.url.replace("http://", "http://alice:hunter2-secret@")
    settings = [
        ModelSettings.resolve(env={"CTXLENS_API_KEY": key}, base_url=with_user, model="m")
        for _ in range(3)
    ]

    async def go() -> None:
        async with ChatClient(settings[0]) as client:
            ok = await client.complete(USER)  # the server answers 401 to anything but the key
            assert ok.text == "echo: hello"

    with caplog.at_level("WARNING", logger="ctxlens.llm"):
        run(go())
    assert settings[0].base_url == server.url
    assert "hunter2" not in json.dumps(settings[0].public_dict())
    warnings = [r.getMessage() for r in caplog.records if "user name or password" in r.message]
    assert len(warnings) == 1 and "hunter2" not in warnings[0] and "alice" not in warnings[0]
