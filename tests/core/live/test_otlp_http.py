"""The OTLP/HTTP receiver's answers, per the specification, over a real socket (httpx)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from core.live.otlp_server import OtlpReceiver
from core.store import Store

TRACE = "5b8efff798038103d269b633813fc60c"


def _request(*span_ids: str, trace: str = TRACE) -> dict[str, object]:
    spans = [
        {
            "traceId": trace,
            "spanId": sid,
            "name": "chat m",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {
                    "key": "gen_ai.input.messages",
                    "value": {
                        "stringValue": json.dumps(
                            [{"role": "user", "parts": [{"type": "text", "content": f"q{i}"}]}]
                        )
                    },
                },
            ],
        }
        for i, sid in enumerate(span_ids)
    ]
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[OtlpReceiver]:
    store = Store.open(tmp_path / "s.db")
    r = OtlpReceiver(store, port=0, max_bytes=4096)
    r.start()
    yield r
    r.stop()
    store.close()


def _post(r: OtlpReceiver, body: bytes, kind: str, **headers: str) -> httpx.Response:
    return httpx.post(r.address, content=body, headers={"Content-Type": kind, **headers})


def test_json_and_gzip_requests_grow_one_trace(receiver: OtlpReceiver) -> None:
    first = _post(receiver, json.dumps(_request("a" * 16)).encode(), "application/json")
    assert first.status_code == 200 and first.json() == {}
    body = gzip.compress(json.dumps(_request("b" * 16, "c" * 16)).encode())
    second = _post(receiver, body, "application/json", **{"Content-Encoding": "gzip"})
    assert second.status_code == 200
    (trace,) = receiver.store.traces()
    with receiver.store.read() as r:
        assert [m.content for m in r.all_messages(trace.id)] == ["q0", "q1"]
        assert r.llm_call_count(trace.id) == 3
    assert receiver.status().traces_seen == 1


def test_partial_success_counts_spans_without_ids(receiver: OtlpReceiver) -> None:
    doc = _request("a" * 16)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].append({"name": "no ids"})  # type: ignore[index]
    res = _post(receiver, json.dumps(doc).encode(), "application/json")
    assert res.status_code == 200
    assert res.json()["partialSuccess"]["rejectedSpans"] == "1"


def test_protobuf_answer_is_an_export_response(receiver: OtlpReceiver) -> None:
    res = _post(receiver, ExportTraceServiceRequest().SerializeToString(), "application/x-protobuf")
    assert res.status_code == 200
    assert res.headers["content-type"] == "application/x-protobuf"
    ExportTraceServiceResponse.FromString(res.content)


@pytest.mark.parametrize(
    ("body", "kind", "headers", "status"),
    [
        (b"\xff\xff\xff", "application/x-protobuf", {}, 400),
        (b"{not json", "application/json", {}, 400),
        (b"[]", "application/json", {}, 400),
        (b"{}", "text/plain", {}, 415),
        (b"{}", "application/json", {"Content-Encoding": "br"}, 415),
        (b"not gzip", "application/json", {"Content-Encoding": "gzip"}, 400),
        (b"x" * 5000, "application/json", {}, 413),
        (gzip.compress(b" " * 100_000), "application/json", {"Content-Encoding": "gzip"}, 413),
    ],
)
def test_bad_requests_get_the_spec_status(
    receiver: OtlpReceiver, body: bytes, kind: str, headers: dict[str, str], status: int
) -> None:
    res = _post(receiver, body, kind, **headers)
    assert res.status_code == status
    if kind == "application/json":
        assert res.json()["message"]
    assert receiver.store.traces() == []
    assert receiver.status().errors == 1


def test_other_methods_and_paths(receiver: OtlpReceiver) -> None:
    res = httpx.get(receiver.address)
    assert res.status_code == 405 and res.headers["allow"] == "POST"
    other = receiver.address.replace("/v1/traces", "/v1/metrics")
    assert (
        httpx.post(other, content=b"{}", headers={"Content-Type": "application/json"}).status_code
        == 404
    )


def test_a_port_in_use_is_a_clear_error(receiver: OtlpReceiver) -> None:
    from core.errors import CtxlensError

    again = OtlpReceiver(receiver.store, port=receiver.port)
    with pytest.raises(CtxlensError, match=r"cannot listen on 127\.0\.0\.1"):
        again.start()
    assert again.status().state == "error"
