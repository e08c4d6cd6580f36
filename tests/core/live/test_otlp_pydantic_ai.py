"""A real instrumented agent library (pydantic-ai, OpenTelemetry GenAI spans) runs against
the loopback model server and exports to ``ctxlens serve --otlp``: its run becomes a
trace of messages and model calls as it goes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai is a dev dependency")
pytest.importorskip("opentelemetry.sdk")

from core.llm.backend import BackendReply, ChatRequest
from core.llm.server import ModelServer
from core.records import ToolCall
from core.store import Store
from tests.core.live.otel_app import provider
from tests.core.live.watch_helpers import Cli, shape, wait_for


class Weather:
    """Asks for the weather tool, then answers with its result."""

    def reply(self, request: ChatRequest) -> BackendReply:
        results = [m for m in request.messages if m.get("role") == "tool"]
        if results:
            return BackendReply(text=f"It is {results[-1].get('content')} in Paris.")
        return BackendReply(tool_calls=(ToolCall("call_1", "weather", '{"city": "Paris"}'),))


def test_pydantic_ai_run_is_received_live(tmp_path: Path) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    db = tmp_path / "live.db"
    server = Cli("--db", str(db), "serve", "--otlp", "127.0.0.1:0", "--json")
    try:
        wait_for(lambda: bool(server.lines))
        p = provider(OTLPSpanExporter(endpoint=server.lines[0]["address"]))
        with ModelServer(Weather()) as model_server:
            model = OpenAIChatModel(
                "scripted", provider=OpenAIProvider(base_url=model_server.url, api_key="sk-test")
            )
            settings = InstrumentationSettings(tracer_provider=p)
            agent = Agent(model, name="weather", capabilities=[Instrumentation(settings=settings)])

            @agent.tool_plain
            def weather(city: str) -> str:
                return "18 C"

            assert agent.run_sync("Weather in Paris?").output == "It is 18 C in Paris."
        p.force_flush()
        wait_for(lambda: len(server.lines) >= 5)  # 2 chat + 1 tool + 1 agent span
    finally:
        assert "Traceback" not in server.stop()
    with Store.open(db) as store:
        (trace,) = store.traces()
        got = [(m[2], m[4], m[6]) for m in shape(store, trace.id)]
        assert got == [
            ("user", "Weather in Paris?", "weather"),
            ("assistant", "", "weather"),
            ("tool", "18 C", "weather"),
            ("assistant", "It is 18 C in Paris.", "weather"),
        ]
        with store.read() as r:
            calls = r.llm_calls(trace.id)
            msgs = list(r.all_messages(trace.id))
        assert [c.model for c in calls] == ["scripted", "scripted"]
        assert [len(c.context) for c in calls] == [1, 3]
        assert calls[0].usage and calls[0].usage.get("input_tokens") == 10
        assert msgs[1].tool_calls[0].name == "weather"
        assert "sk-test" not in repr(msgs) + repr(calls) + repr(trace)
