"""``ctxlens serve --otlp`` as a real process, fed by the real OpenTelemetry SDK exporter
(protobuf over HTTP, one request per span, gzip and not): the trace it builds as spans
arrive equals what ``ctxlens import`` makes of the same spans written to a file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the OpenTelemetry SDK is a dev dependency")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from core.importers.api import import_paths
from core.store import Store
from tests.core.live.otel_app import Keep, otlp_json, provider, run_agent
from tests.core.live.watch_helpers import Cli, shape, wait_for


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_sdk_exporter_to_serve_equals_file_import(tmp_path: Path, compression: Compression) -> None:
    db = tmp_path / "live.db"
    server = Cli("--db", str(db), "serve", "--otlp", "127.0.0.1:0", "--json")
    try:
        wait_for(lambda: bool(server.lines))
        listening = server.lines[0]
        assert listening["event"] == "listening"
        assert listening["address"].startswith("http://127.0.0.1:")
        keep = Keep()
        exporter = OTLPSpanExporter(endpoint=listening["address"], compression=compression)
        p = provider(exporter, keep)
        run_agent(p)
        p.force_flush()
        wait_for(lambda: len(server.lines) >= 5)  # listening + one change per span
    finally:
        err = server.stop()
    assert "Traceback" not in err
    changes = server.lines[1:]
    assert changes[0]["event"] == "trace"
    assert {c["trace_id"] for c in changes} == {changes[0]["trace_id"]}

    spans_file = tmp_path / "spans.json"
    spans_file.write_text(otlp_json(keep.spans))
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [spans_file])
        (trace,) = live.traces()
        got = list(shape(live, trace.id))
        assert [(m[2], m[4]) for m in got] == [
            ("user", "Weather in Paris? é"),
            ("assistant", ""),
            ("tool", "18 C"),
            ("assistant", "It is 18 C in Paris."),
        ]
        # The same messages in the same tree; only the agent name differs: the agent span
        # ends (and is sent) after its model calls, so live messages say "main".
        assert [m[:-1] for m in got] == [m[:-1] for m in shape(full, res.trace_id)]
        with live.read() as r, full.read() as f:
            calls = r.llm_calls(trace.id)
            assert [c.model for c in calls] == ["gpt-test", "gpt-test"]
            assert [len(c.context) for c in calls] == [1, 3]
            assert [c.request_sha256 for c in calls] == [
                c.request_sha256 for c in f.llm_calls(res.trace_id)
            ]
            # Live review: the live title was the root span's name ("agent run") where the
            # import says what was asked, and the live span ended at the last message, not
            # at the end of the last span (the agent's own span outlasts its last call).
            imported = f.trace(res.trace_id)
            assert trace.title == imported.title == "Weather in Paris? é"
            assert (trace.created_at, trace.metadata.get("recorded_span")) == (
                imported.created_at,
                imported.metadata.get("recorded_span"),
            )
            assert trace.metadata["recorded_span"]["end"] > calls[-1].created_at


def test_a_trace_continues_across_a_receiver_restart(tmp_path: Path) -> None:
    keep = Keep()
    p = provider(keep)
    run_agent(p)
    spans = keep.spans  # ended order: chat, tool, chat, agent
    db = tmp_path / "live.db"
    for part in (spans[:2], spans[2:]):  # one request per span, as they ended
        _serve_and_send(db, [[span] for span in part])
    spans_file = tmp_path / "spans.json"
    spans_file.write_text(otlp_json(spans))
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [spans_file])
        (trace,) = live.traces()
        assert [m[:-1] for m in shape(live, trace.id)] == [
            m[:-1] for m in shape(full, res.trace_id)
        ]
        with live.read() as r:
            assert r.llm_call_count(trace.id) == 2
        # the agent span came after the restart: the trace still starts when it started
        imported = full.trace(res.trace_id)
        assert (trace.title, trace.created_at) == (imported.title, imported.created_at)
        assert trace.metadata["recorded_span"] == imported.metadata["recorded_span"]


def test_a_restart_keeps_the_span_recorded_before_it(tmp_path: Path) -> None:
    """Review: after a restart the receiver's builder began its span afresh, so a run that
    brought only the last model call wrote that call's start and end as the trace's span
    (and a span sent again, a single instant). The stored span goes on from where it was."""
    keep = Keep()
    p = provider(keep)
    run_agent(p)
    chat1, tool, chat2, agent = keep.spans  # ended order
    db = tmp_path / "live.db"
    _serve_and_send(db, [[chat1], [tool], [agent]])
    _serve_and_send(db, [[chat2]])
    _serve_and_send(db, [[tool]])  # an exporter's retry after another restart
    spans_file = tmp_path / "spans.json"
    spans_file.write_text(otlp_json(keep.spans))
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [spans_file])
        (trace,) = live.traces()
        imported = full.trace(res.trace_id)
        assert trace.metadata["recorded_span"] == imported.metadata["recorded_span"]
        assert trace.created_at == imported.created_at


def test_spans_sent_again_are_written_once(tmp_path: Path) -> None:
    """Live review: an exporter sends a batch again after a timeout or a 503, and the
    receiver wrote each resent model span as one more call (2 calls became 4, and the cost
    doubled). The SDK exporter sends the same spans twice, and once more after a restart
    of the receiver: the trace holds what one sending makes."""
    keep = Keep()
    p = provider(keep)
    run_agent(p)
    spans = keep.spans
    db = tmp_path / "live.db"
    for sends in (2, 1):  # twice to one receiver, then again to a restarted one
        _serve_and_send(db, [spans] * sends)
    spans_file = tmp_path / "spans.json"
    spans_file.write_text(otlp_json(spans))
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [spans_file])
        (trace,) = live.traces()
        with live.read() as r, full.read() as f:
            assert r.llm_call_count(trace.id) == f.llm_call_count(res.trace_id) == 2
            assert [c.usage for c in r.llm_calls(trace.id)] == [
                c.usage for c in f.llm_calls(res.trace_id)
            ]
        assert [m[:-1] for m in shape(live, trace.id)] == [
            m[:-1] for m in shape(full, res.trace_id)
        ]


def _serve_and_send(db: Path, requests: list[list[Any]]) -> None:
    """A ``ctxlens serve --otlp`` process on ``db``, sent each of ``requests`` (a list of
    SDK spans) by the SDK exporter, stopped once it has reported each one."""
    server = Cli("--db", str(db), "serve", "--otlp", "127.0.0.1:0", "--json")
    try:
        wait_for(lambda: bool(server.lines))
        exporter = OTLPSpanExporter(endpoint=server.lines[0]["address"])
        for spans in requests:
            assert exporter.export(spans).name == "SUCCESS"
        wait_for(lambda: len(server.lines) == 1 + len(requests))
    finally:
        assert "Traceback" not in server.stop()
