"""A small OpenTelemetry-instrumented "agent": GenAI spans made with the real SDK, one
export request per span (children end, and are sent, before their parents)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class Keep(SpanExporter):
    """Keeps every span (to write the same spans to a file for the file importer)."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS


def provider(*exporters: SpanExporter) -> TracerProvider:
    p = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    for e in exporters:
        p.add_span_processor(SimpleSpanProcessor(e))
    return p


def _messages(*msgs: dict[str, object]) -> str:
    return json.dumps(list(msgs))


USER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris? é"}]}
CALL = {
    "role": "assistant",
    "parts": [
        {"type": "tool_call", "id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}
    ],
}
RESULT = {
    "role": "tool",
    "parts": [{"type": "tool_call_response", "id": "call_1", "response": "18 C"}],
}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "It is 18 C in Paris."}]}


def run_agent(p: TracerProvider) -> None:
    """Two model calls with a tool call between them, under one agent span."""
    tracer = p.get_tracer("weather-agent")
    with tracer.start_as_current_span(
        "invoke_agent weather",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"},
    ):
        with tracer.start_as_current_span("chat gpt-test") as s:
            s.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.input.messages": _messages(USER),
                    "gen_ai.output.messages": _messages(CALL),
                    "gen_ai.usage.input_tokens": 12,
                    "gen_ai.usage.output_tokens": 7,
                }
            )
        with tracer.start_as_current_span("execute_tool weather") as s:
            s.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "weather",
                    "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.result": "18 C",
                }
            )
        with tracer.start_as_current_span("chat gpt-test") as s:
            s.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.input.messages": _messages(USER, CALL, RESULT),
                    "gen_ai.output.messages": _messages(ANSWER),
                    "gen_ai.usage.input_tokens": 30,
                    "gen_ai.usage.output_tokens": 9,
                }
            )


def otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """The spans as an OTLP JSON file (what ``ctxlens import`` reads)."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return MessageToJson(encode_spans(spans))
