"""The proxy's own upstream client (``core/proxy/upstream.py``) on wire shapes the fake
upstream never sends: chunked framing split across reads, trailers, an interim ``100``,
a close-delimited body, kept-alive connections reused; and an upstream behind an
environment proxy, which goes through httpx instead."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.proxy.server import ProxyServer
from core.store import Store
from tests.servers.scripted_http import Script, ScriptedHttp

SSE = "text/event-stream"
EVENTS = [
    b'data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}\n\n',
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}\n\n',
    b"data: [DONE]\n\n",
]
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


@pytest.fixture
def upstream() -> Iterator[ScriptedHttp]:
    with ScriptedHttp() as up:
        yield up


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "p.db")
    yield s
    s.close()


class Calls(list[dict[str, object]]):
    """The call events the proxy reported (from its loop thread), waited for by count."""

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition()

    def add(self, event: dict[str, object]) -> None:
        with self._cond:
            self.append(event)
            self._cond.notify_all()

    def wait(self, n: int) -> Calls:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self) >= n, timeout=20), list(self)
        return self


def _proxy(store: Store, upstream: str, calls: Calls) -> ProxyServer:
    return ProxyServer(store, upstream, port=0, timeout=5, on_call=calls.add)


def _calls(store: Store, trace: str) -> list[object]:
    with store.read() as r:
        return list(r.llm_calls(trace))


def _post(proxy: ProxyServer) -> httpx.Response:
    url = proxy.url + "/v1/chat/completions"
    return httpx.post(url, content=json.dumps(BODY), timeout=10, trust_env=False)


def _head(status: str, *headers: str) -> bytes:
    return (f"HTTP/1.1 {status}\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode()


def _split_chunked(events: list[bytes]) -> list[bytes]:
    """The events chunked, then cut at awkward places: inside a size line, inside data,
    between a chunk's data and its CRLF; a trailer at the end."""
    wire = b"".join(b"%X;ext=1\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\nx-t: 1\r\n\r\n"
    cuts = [1, 7, len(events[0]) + 9, len(events[0]) + 11, len(wire) - 3]
    return [wire[a:b] for a, b in zip([0, *cuts], [*cuts, len(wire)])]


def test_chunked_framing_split_anywhere_reaches_the_client_exactly(
    store: Store, upstream: ScriptedHttp
) -> None:
    calls = Calls()
    upstream.replies.append(
        Script([_head("200 OK", f"content-type: {SSE}", "transfer-encoding: chunked")])
    )
    upstream.replies[0].pieces += _split_chunked(EVENTS)
    with _proxy(store, upstream.url, calls) as proxy:
        resp = _post(proxy)
        calls.wait(1)
    assert resp.content == b"".join(EVENTS)
    assert [(c["outcome"], c["complete"]) for c in calls] == [("done", True)]


def test_kept_alive_connection_is_reused_and_an_interim_100_is_skipped(
    store: Store, upstream: ScriptedHttp
) -> None:
    calls = Calls()
    plain = json.dumps({"id": "c", "choices": [{"index": 0, "message": {"role": "assistant",
                        "content": "ok"}, "finish_reason": "stop"}]}).encode()  # fmt: skip
    head = _head("200 OK", "content-type: application/json", f"content-length: {len(plain)}")
    upstream.replies.append(Script([_head("100 Continue"), head, plain[:5], plain[5:]]))
    upstream.replies.append(Script([head + plain]))
    with _proxy(store, upstream.url, calls) as proxy:
        first, second = _post(proxy), _post(proxy)
        calls.wait(2)
    assert first.content == second.content == plain
    assert first.headers["content-length"] == str(len(plain))
    assert upstream.connections == 1
    assert [c["outcome"] for c in calls] == ["done", "done"]


def test_close_delimited_body_is_chunked_to_the_client_and_the_line_dropped(
    store: Store, upstream: ScriptedHttp
) -> None:
    calls = Calls()
    reply = [_head("200 OK", f"content-type: {SSE}"), *EVENTS]
    upstream.replies.extend([Script(reply, close=True), Script(reply, close=True)])
    with _proxy(store, upstream.url, calls) as proxy:
        first, second = _post(proxy), _post(proxy)
        calls.wait(2)
    assert first.content == second.content == b"".join(EVENTS)
    assert first.headers["transfer-encoding"] == "chunked"
    assert upstream.connections == 2
    assert [c["complete"] for c in calls] == [True, True]


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and its key, as PEM files."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder(subject_name=name, issuer_name=name, public_key=key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def test_https_upstream_is_verified_and_kept_alive(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = _self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted the way httpx's context reads
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    calls = Calls()
    head = _head("200 OK", f"content-type: {SSE}", "transfer-encoding: chunked")
    with ScriptedHttp(tls=tls) as up:
        up.replies.extend([Script([head, *_split_chunked(EVENTS)]) for _ in range(2)])
        with _proxy(store, up.url, calls) as proxy:
            first, second = _post(proxy), _post(proxy)
            calls.wait(2)
    assert first.content == second.content == b"".join(EVENTS)
    assert up.connections == 1
    assert [c["outcome"] for c in calls] == ["done", "done"]


def test_upstream_behind_an_environment_proxy_goes_through_it(
    store: Store, upstream: ScriptedHttp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", upstream.url)  # the scripted server plays the proxy
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    calls = Calls()
    upstream.replies.append(
        Script([_head("200 OK", f"content-type: {SSE}", "transfer-encoding: chunked")])
    )
    upstream.replies[0].pieces += _split_chunked(EVENTS)
    with _proxy(store, "http://api.example.invalid/v1", calls) as proxy:
        resp = _post(proxy)
        calls.wait(1)
    assert resp.content == b"".join(EVENTS)
    assert upstream.targets == ["http://api.example.invalid/v1/chat/completions"]
    assert [c["outcome"] for c in calls] == ["done"]


def _give_up_after_first_bytes(proxy: ProxyServer, wait_s: float) -> tuple[bytes, float]:
    """An agent that streams a call, takes what arrives within ``wait_s`` and closes its
    connection: what it got, and when it closed (``time.monotonic()``)."""
    got = b""
    url = proxy.url + "/v1/chat/completions"
    timeout = httpx.Timeout(wait_s, connect=5)
    with httpx.Client(timeout=timeout, trust_env=False) as client:
        try:
            with client.stream("POST", url, content=json.dumps(BODY)) as resp:
                for piece in resp.iter_raw():
                    got += piece
        except httpx.ReadTimeout:
            pass
    return got, time.monotonic()


@pytest.mark.parametrize("via", ["direct", "environment proxy"])
@pytest.mark.parametrize("when", ["before the head", "mid-stream"])
def test_an_agent_that_gives_up_on_a_silent_model_ends_the_call_at_once(
    store: Store, upstream: ScriptedHttp, monkeypatch: pytest.MonkeyPatch, via: str, when: str
) -> None:
    """Live review: an agent whose client timed out while the model was silent closed its
    connection, and the proxy went on waiting on the upstream until its own timeout (600 s
    by default): the call showed in flight for ten minutes and the model kept generating.
    The agent leaving ends the call, recorded as disconnected with what arrived, and the
    upstream line is dropped."""
    if via == "environment proxy":
        monkeypatch.setenv("HTTP_PROXY", upstream.url)  # the scripted server plays the proxy
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        target = "http://api.example.invalid/v1"
    else:
        target = upstream.url + "/v1"
    head = _head("200 OK", f"content-type: {SSE}", "transfer-encoding: chunked")
    first = b"%X\r\n%s\r\n" % (len(EVENTS[0]), EVENTS[0])
    upstream.replies.append(Script([] if when == "before the head" else [head, first], hold_s=60))
    calls = Calls()
    proxy = ProxyServer(store, target, port=0, timeout=120, on_call=calls.add)
    with proxy:
        got, left = _give_up_after_first_bytes(proxy, 0.5)
        (event,) = calls.wait(1)
        assert proxy.status.in_flight == 0
    assert event["outcome"] == "disconnected"
    deadline = time.monotonic() + 10
    while not upstream.dropped and time.monotonic() < deadline:
        time.sleep(0.02)
    assert upstream.dropped and upstream.dropped[0] - left < 5  # not the 120 s timeout
    (call,) = _calls(store, str(event["trace"]))
    assert isinstance(call.error, str)  # type: ignore[attr-defined]
    if when == "before the head":
        assert got == b"" and event["chunks"] == 0
        assert call.error.startswith("client disconnected before the response began")
    else:
        assert got == EVENTS[0] and event["chunks"] == 1
        assert call.error.startswith("client disconnected after 1 chunks")
        with store.read() as r:
            (reply,) = [m for m in r.all_messages(str(event["trace"])) if m.role == "assistant"]
        assert reply.content == "Hel"  # what arrived before the agent left is kept
