"""Upstream errors, timeouts, a client that hangs up, and a proxy killed mid-request: each
is recorded as what it was, the client sees the upstream's own answer, and no credential
reaches the store or the logs."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from core.store import Store
from tests.core.proxy.conftest import context, ctxlens
from tests.helpers.proxy_process import ProxyProcess
from tests.servers.fake_upstream import FakeUpstream, Reply

KEY = "sk-secret-9f8e7d6c5b4a39281706"
ANT_KEY = "sk-ant-secret-a1b2c3d4e5f60718"
HELLO = [{"role": "user", "content": "hello"}]


def _client(proxy: ProxyProcess, **kw: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.url + "/v1", api_key=KEY, max_retries=0, **kw)  # type: ignore[arg-type]


def _calls(db: Path, trace: str) -> list[object]:
    with Store.open(db) as store, store.read() as r:
        return list(r.llm_calls(trace))


def test_upstream_500_reaches_the_client_and_is_recorded(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    upstream.replies.append(Reply(fault="500"))
    with pytest.raises(openai.InternalServerError) as err:
        _client(proxy).chat.completions.create(model="m", messages=HELLO)  # type: ignore[arg-type]
    assert "upstream broke" in str(err.value)
    (event,) = proxy.calls(1)
    assert (event["status"], event["outcome"]) == (500, "error")
    (call,) = _calls(db, event["trace"])
    assert call.error.startswith("upstream HTTP 500") and call.response_sequence is None  # type: ignore[attr-defined]
    assert KEY not in call.error and "[redacted]" in call.error  # type: ignore[attr-defined]


def test_timeouts_before_headers_and_mid_stream(upstream: FakeUpstream, db: Path) -> None:
    proxy = ProxyProcess(db, upstream.url, "--timeout", "0.5")
    try:
        upstream.replies.extend(
            [Reply(fault="stall_head"), Reply("a b c d e f", fault="stall_mid")]
        )
        with pytest.raises(openai.APIStatusError) as err:
            _client(proxy).chat.completions.create(model="m", messages=HELLO)  # type: ignore[arg-type]
        assert err.value.status_code == 504
        got = ""
        with pytest.raises((openai.APIError, httpx.HTTPError)):
            for chunk in _client(proxy).chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "again"}],
                stream=True,  # type: ignore[arg-type]
            ):
                got += chunk.choices[0].delta.content or "" if chunk.choices else ""
        head, mid = proxy.calls(2)
        assert (head["status"], head["outcome"]) == (504, "timeout")
        assert mid["outcome"] == "timeout" and not mid["complete"]
        ctx = context(db, mid["trace"], 0)
        assert ctx["proxy_request"]["state"] == "timeout"
        (call,) = _calls(db, mid["trace"])
        assert "timeout" in call.error  # type: ignore[attr-defined]
    finally:
        proxy.stop()


def test_client_disconnecting_mid_stream_is_recorded(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    upstream.replies.append(Reply("x" * 400, fault="pace", pace_s=0.02, text_chunk=1))
    stream = _client(proxy).chat.completions.create(model="m", messages=HELLO, stream=True)  # type: ignore[arg-type]
    for i, _chunk in enumerate(stream):
        if i == 3:
            break
    stream.close()
    (event,) = proxy.calls(1)
    assert event["outcome"] == "disconnected" and 3 <= event["chunks"] < 400
    (call,) = _calls(db, event["trace"])
    assert call.error.startswith("client disconnected")  # type: ignore[attr-defined]


def test_sigkill_mid_request_then_restart_marks_it_incomplete(
    upstream: FakeUpstream, db: Path
) -> None:
    upstream.replies.append(Reply(fault="stall_head"))
    proxy = ProxyProcess(db, upstream.url)
    url = proxy.url + "/v1/chat/completions"
    body = {"model": "m", "messages": HELLO}

    def post() -> None:
        with contextlib.suppress(httpx.HTTPError):  # the proxy dies under it
            httpx.post(url, json=body, headers={"Authorization": f"Bearer {KEY}"}, timeout=60)

    sender = threading.Thread(target=post, daemon=True)
    sender.start()
    deadline = threading.Event()
    while not upstream.requests and not deadline.wait(0.05):
        pass  # the request row is committed before the request goes upstream
    proxy.kill()
    sender.join(30)
    again = ProxyProcess(db, upstream.url)
    try:
        assert again.listening["recovered_incomplete"] == 1
        (trace,) = [t.id for t in Store.open(db).traces()]
        ctx = context(db, trace, 0)
        assert ctx["proxy_request"]["state"] == "incomplete"
        assert [m["content"] for m in ctx["messages"]] == ["hello"]
        (call,) = _calls(db, trace)
        assert call.error.startswith("incomplete")  # type: ignore[attr-defined]
    finally:
        again.stop()
    assert again.events[-1]["event"] == "stopped"


def test_credentials_pass_through_and_are_never_stored_or_logged(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path
) -> None:
    upstream.replies.extend([Reply("fine"), Reply(fault="500"), Reply("ok")])
    _client(proxy).chat.completions.create(model="m", messages=HELLO)  # type: ignore[arg-type]
    with pytest.raises(openai.InternalServerError):
        _client(proxy).chat.completions.create(model="m", messages=HELLO, stream=True)  # type: ignore[arg-type]
    ant = anthropic.Anthropic(
        base_url=proxy.url, api_key=ANT_KEY, max_retries=0, default_headers={"x-api-key": ANT_KEY}
    )
    ant.messages.create(model="c", max_tokens=8, messages=HELLO)  # type: ignore[arg-type]
    proxy.calls(3)
    assert upstream.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert upstream.requests[2].headers["x-api-key"] == ANT_KEY
    assert ANT_KEY in upstream.requests[2].headers["authorization"]
    code = proxy.stop()
    assert code == 0, proxy.stderr
    files = [p for p in db.parent.rglob("*") if p.is_file()]
    assert any(p.name == "proxy.db" for p in files)
    for path in files:
        data = path.read_bytes()
        assert KEY.encode() not in data and ANT_KEY.encode() not in data, path
    logs = "".join(proxy.stdout) + proxy.stderr
    assert KEY not in logs and ANT_KEY not in logs
    assert "error" in logs  # the 500 was logged, without the key it echoed


def test_bad_arguments_are_one_line_errors(db: Path) -> None:
    code, _out, err = ctxlens(db, "proxy", "--upstream", "ftp://x", "--listen", "127.0.0.1:0")
    assert code == 2 and "not an http(s) URL" in err and "Traceback" not in err
    code, _out, err = ctxlens(db, "proxy", "--upstream", "http://x", "--listen", "nonsense")
    assert code == 2 and "HOST:PORT" in err


def test_sigterm_mid_request_records_it_incomplete_before_exiting(
    upstream: FakeUpstream, db: Path
) -> None:
    upstream.replies.append(Reply(fault="stall_head"))
    proxy = ProxyProcess(db, upstream.url)
    url = proxy.url + "/v1/chat/completions"

    def post() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(url, json={"model": "m", "messages": HELLO}, timeout=60)

    sender = threading.Thread(target=post, daemon=True)
    sender.start()
    waiting = threading.Event()
    while not upstream.requests and not waiting.wait(0.05):
        pass
    assert proxy.stop() == 0, proxy.stderr
    sender.join(30)
    (trace,) = [t.id for t in Store.open(db).traces()]
    (call,) = _calls(db, trace)
    assert call.error.startswith("incomplete")  # type: ignore[attr-defined]
    assert context(db, trace, 0)["proxy_request"]["state"] == "incomplete"


def test_a_stop_mid_stream_keeps_what_arrived(upstream: FakeUpstream, db: Path) -> None:
    """Live review: with the default timeout, a stream stalled after its first chunks and a
    stop (SIGINT) recorded the call "incomplete" with none of them ("Hello" was lost), where
    a timeout kept them. A stop records what arrived, then stops."""
    upstream.replies.append(Reply("a b c d e f", fault="stall_mid"))
    proxy = ProxyProcess(db, upstream.url)  # the default timeout: 600 s
    got: list[str] = []

    def read() -> None:
        with contextlib.suppress(openai.APIError, httpx.HTTPError):
            for chunk in _client(proxy).chat.completions.create(
                model="m",
                messages=HELLO,
                stream=True,  # type: ignore[arg-type]
            ):
                got.append(chunk.choices[0].delta.content or "" if chunk.choices else "")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    waited = threading.Event()
    while not "".join(got) and not waited.wait(0.05):
        pass  # the first chunks came through; the upstream stalls now
    assert proxy.stop() == 0
    reader.join(30)
    (trace,) = [t.id for t in Store.open(db).traces()]
    ctx = context(db, trace, 0)
    assert ctx["proxy_request"]["state"] == "incomplete"
    assert ctx["proxy_request"]["chunks"] >= 1
    (call,) = _calls(db, trace)
    assert call.error.startswith("incomplete")  # type: ignore[attr-defined]
    with Store.open(db) as store, store.read() as r:
        (reply,) = [m for m in r.all_messages(trace) if m.role == "assistant"]
    assert reply.content == "".join(got) != ""


def test_an_sdk_that_times_out_on_a_silent_model_ends_the_call_at_once(
    upstream: FakeUpstream, db: Path
) -> None:
    """``ctxlens proxy`` with its default timeout (600 s) and the official SDKs, each with
    a client timeout of half a second: a model silent before its head, and one silent after
    its first chunks. Each agent gives up, and each call is recorded as disconnected at
    once (it stayed in flight until the proxy's own timeout)."""
    upstream.replies.extend([Reply(fault="stall_head"), Reply("a b c d e f", fault="stall_mid")])
    proxy = ProxyProcess(db, upstream.url)
    try:
        with pytest.raises(openai.APITimeoutError):
            _client(proxy, timeout=0.5).chat.completions.create(model="m", messages=HELLO)  # type: ignore[arg-type]
        ant = anthropic.Anthropic(base_url=proxy.url, api_key=ANT_KEY, max_retries=0, timeout=0.5)
        with (
            pytest.raises((anthropic.APITimeoutError, httpx.ReadTimeout)),
            ant.messages.stream(model="m", max_tokens=10, messages=HELLO) as stream,  # type: ignore[arg-type]
        ):
            for _text in stream.text_stream:
                pass
        head, mid = proxy.calls(2, timeout=20)
        assert (head["outcome"], head["chunks"]) == ("disconnected", 0)
        assert mid["outcome"] == "disconnected" and mid["chunks"] >= 1
        first = _calls(db, head["trace"])[0]
        assert first.error.startswith("client disconnected before the response began")  # type: ignore[attr-defined]
        ctx = context(db, mid["trace"], mid["call"])
        assert ctx["proxy_request"]["state"] == "disconnected"
    finally:
        proxy.stop()
