"""Reading OpenTelemetry-like span dumps into one ``Span`` shape.

Accepted: OTLP JSON (``resourceSpans`` objects, alone or one per line as the collector's
file exporter writes them), SDK span lists (``{"spans": [...]}`` as any-agent writes, or a
bare list), and Langfuse trace exports (``{"trace", "observations"}``). Attributes are
flattened to ``{key: value}``; JSON carried in string attributes is decoded where read.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.importers.content import as_dict, as_list, json_or_text, parse_time

LLM_OPS = frozenset(
    {
        "chat",
        "text_completion",
        "generate_content",
        "call_llm",
        "completion",
        "responses",
        "generate",
    }
)
AGENT_OPS = frozenset({"invoke_agent", "create_agent"})
#: Vercel AI SDK spans (the JavaScript SDK OpenInference's exporters read): the provider call.
VERCEL_CALLS = (".doGenerate", ".doStream")


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float
    end: float | None
    attrs: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    input: Any = None
    output: Any = None
    model: str = ""
    usage: dict[str, Any] | None = None
    status: str = ""
    order: int = 0
    observation_type: str = ""

    @property
    def kind(self) -> str:
        """llm | tool | agent | other."""
        a = self.attrs
        op = str(a.get("gen_ai.operation.name") or "").lower()
        oi = str(a.get("openinference.span.kind") or "").upper()
        obs = self.observation_type.upper()
        if op in LLM_OPS or oi == "LLM" or obs == "GENERATION" or "gen_ai.prompt.0.role" in a:
            return "llm"
        if str(a.get("ai.operationId") or "").endswith(VERCEL_CALLS):
            return "llm"  # the Vercel AI SDK's provider call (doGenerate / doStream)
        if op == "execute_tool" or oi == "TOOL" or obs == "TOOL":
            return "tool"
        if op in AGENT_OPS or oi == "AGENT" or obs == "AGENT" or "gen_ai.agent.name" in a:
            return "agent"
        return "other"

    @property
    def agent_name(self) -> str:
        a = self.attrs
        name = a.get("gen_ai.agent.name") or a.get("agent_name") or a.get("graph.node.id")
        return str(name or self.name)


# -- OTLP JSON --------------------------------------------------------------------------
def any_value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value."""
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        return [any_value(x) for x in as_list(as_dict(v["arrayValue"]).get("values"))]
    if "kvlistValue" in v:
        return kv_attrs(as_dict(v["kvlistValue"]).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def kv_attrs(values: Any) -> dict[str, Any]:
    if isinstance(values, dict):
        return dict(values)
    out: dict[str, Any] = {}
    for kv in as_list(values):
        kv = as_dict(kv)
        if "key" in kv:
            out[str(kv["key"])] = any_value(kv.get("value"))
    return out


def otlp_id(value: Any) -> str:
    """OTLP JSON ids are hex; some exporters write base64 (the protobuf default)."""
    s = str(value or "")
    if not s or all(c in "0123456789abcdefABCDEF" for c in s):
        return s.lower()
    try:
        return base64.b64decode(s).hex()
    except (ValueError, TypeError):
        return s


def otlp_spans(doc: dict[str, Any], start: int = 0) -> Iterator[Span]:
    n = start
    for rs in as_list(doc.get("resourceSpans")):
        rs = as_dict(rs)
        resource = kv_attrs(as_dict(rs.get("resource")).get("attributes"))
        for ss in as_list(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans")):
            for sp in as_list(as_dict(ss).get("spans")):
                sp = as_dict(sp)
                attrs = kv_attrs(sp.get("attributes"))
                if resource.get("service.name"):
                    attrs.setdefault("service.name", resource["service.name"])
                events = [
                    {
                        "name": as_dict(e).get("name"),
                        "time": parse_time(_nano(as_dict(e).get("timeUnixNano"))),
                        "attributes": kv_attrs(as_dict(e).get("attributes")),
                    }
                    for e in as_list(sp.get("events"))
                ]
                status = as_dict(sp.get("status"))
                yield Span(
                    trace_id=otlp_id(sp.get("traceId")),
                    span_id=otlp_id(sp.get("spanId")),
                    parent_id=otlp_id(sp.get("parentSpanId")) or None,
                    name=str(sp.get("name") or ""),
                    start=parse_time(_nano(sp.get("startTimeUnixNano"))) or 0.0,
                    end=parse_time(_nano(sp.get("endTimeUnixNano"))),
                    attrs=attrs,
                    events=events,
                    status=_status(status.get("code"), status.get("message")),
                    order=n,
                )
                n += 1


def _nano(v: Any) -> Any:
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return v


def _status(code: Any, message: Any) -> str:
    if code in (2, "STATUS_CODE_ERROR", "ERROR", "error"):
        return str(message or "error")
    return ""


# -- SDK span lists (any-agent, opentelemetry-sdk to_json) ----------------------------
def sdk_span(sp: dict[str, Any], n: int) -> Span:
    """A span as the Python SDK's ``to_json`` writes it, or as the JavaScript SDK's
    ``ReadableSpan`` serializes (``spanContext``, ``parentSpanId``/``parentSpanContext``,
    times as ``[seconds, nanoseconds]``)."""
    if "spanContext" in sp:
        ctx = as_dict(sp.get("spanContext"))
        parent = sp.get("parentSpanId") or as_dict(sp.get("parentSpanContext")).get("spanId")
        ids = (
            str(ctx.get("traceId") or "trace"),
            str(ctx.get("spanId") or n),
            str(parent) if parent else None,
        )
        return _sdk_span(sp, n, ids, _JS_SDK)
    ctx = as_dict(sp.get("context"))
    parent = sp.get("parent")
    parent_id = as_dict(parent).get("span_id") if isinstance(parent, dict) else parent
    ids = (
        str(ctx.get("trace_id") or sp.get("trace_id") or "trace"),
        str(ctx.get("span_id") or sp.get("span_id") or n),
        str(parent_id) if parent_id is not None else None,
    )
    return _sdk_span(sp, n, ids, _PYTHON_SDK)


@dataclass(frozen=True)
class _SdkLayout:
    """Where one SDK's serialized span keeps its times and status, and how it writes a time:
    the two SDKs differ only in these names (their ids are read by ``sdk_span``)."""

    start: str
    end: str
    event_time: str
    status_code: str
    status_message: str
    when: Callable[[Any], float | None]


def _sdk_span(
    sp: dict[str, Any], n: int, ids: tuple[str, str, str | None], layout: _SdkLayout
) -> Span:
    trace_id, span_id, parent_id = ids
    status = as_dict(sp.get("status"))
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent_id,
        name=str(sp.get("name") or ""),
        start=layout.when(sp.get(layout.start)) or 0.0,
        end=layout.when(sp.get(layout.end)),
        attrs=as_dict(sp.get("attributes")),
        events=_events(sp.get("events"), layout.event_time, layout.when),
        status=_status(status.get(layout.status_code), status.get(layout.status_message)),
        order=n,
    )


def _events(raw: Any, stamp: str, when: Callable[[Any], float | None]) -> list[dict[str, Any]]:
    """A span's events: name, time (read from ``stamp`` by ``when``) and attributes."""
    return [
        {
            "name": as_dict(e).get("name"),
            "time": when(as_dict(e).get(stamp)),
            "attributes": as_dict(as_dict(e).get("attributes")),
        }
        for e in as_list(raw)
    ]


def _hrtime(value: Any) -> float | None:
    """OpenTelemetry JS ``HrTime`` (``[seconds, nanoseconds]``), else what ``parse_time`` reads."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value):
        return float(value[0]) + float(value[1]) / 1e9
    return parse_time(value)


_PYTHON_SDK = _SdkLayout(
    "start_time", "end_time", "timestamp", "status_code", "description", parse_time
)
_JS_SDK = _SdkLayout("startTime", "endTime", "time", "code", "message", _hrtime)


# -- Langfuse exports -------------------------------------------------------------------
def langfuse_spans(trace: dict[str, Any], observations: list[Any]) -> Iterator[Span]:
    tid = str(trace.get("id") or "trace")
    for n, o in enumerate(observations):
        o = as_dict(o)
        meta = as_dict(json_or_text(o.get("metadata")))
        attrs = as_dict(json_or_text(meta.get("attributes")))
        usage = as_dict(o.get("usageDetails")) or as_dict(o.get("usage"))
        yield Span(
            trace_id=str(o.get("traceId") or tid),
            span_id=str(o.get("id") or n),
            parent_id=str(o["parentObservationId"]) if o.get("parentObservationId") else None,
            name=str(o.get("name") or ""),
            start=parse_time(o.get("startTime")) or 0.0,
            end=parse_time(o.get("endTime")),
            attrs=attrs,
            input=json_or_text(o.get("input")),
            output=json_or_text(o.get("output")),
            model=str(o.get("model") or ""),
            usage=usage or None,
            status=str(o.get("statusMessage") or "") if o.get("level") == "ERROR" else "",
            order=n,
            observation_type=str(o.get("type") or ""),
        )
