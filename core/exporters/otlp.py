"""A trace as OTLP JSON (``ExportTraceServiceRequest``) with current ``gen_ai.*`` attributes.

The shape other tools ingest (collectors, Langfuse, Phoenix): one ``invoke_agent`` span per
agent (the main agent at the root, subagent branches as children), one ``chat`` span per
model call, one ``execute_tool`` span per tool result. A recorded LLM call carries its exact
input (``gen_ai.input.messages``, the context it received) and output; an assistant
message without a recorded call becomes a ``chat`` span with its output and usage only.
Compaction boundaries are span events on the agent span. Ids are derived from the trace
id, so exporting twice gives the same document. Messages are read page by page.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import IO, Any

from core.context.view import call_view
from core.json_text import loads_or
from core.records import CompactionEvent, LlmCall, Message
from core.store.reader import Reader
from core.store.store import Store

SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
SCOPE = {"name": "ctxlens", "version": "0.1.0"}


def _id(*parts: Any, size: int = 16) -> str:
    raw = "\0".join(str(p) for p in parts).encode("utf-8", "replace")
    return hashlib.sha256(raw).hexdigest()[: size * 2]


def _nanos(t: float) -> str:
    return str(int(max(t, 0.0) * 1e9))


def attr(key: str, value: Any) -> dict[str, Any]:
    """One OTLP ``KeyValue`` (proto3 JSON mapping: int64 as a string)."""
    if isinstance(value, bool):
        v: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        v = {"intValue": str(value)}
    elif isinstance(value, float):
        v = {"doubleValue": value}
    elif isinstance(value, list | tuple):
        v = {"arrayValue": {"values": [attr("", x)["value"] for x in value]}}
    elif isinstance(value, str):
        v = {"stringValue": value}
    else:
        v = {"stringValue": json.dumps(value, ensure_ascii=False, sort_keys=True)}
    return {"key": key, "value": v}


def _attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [attr(k, v) for k, v in values.items() if v is not None]


def semconv_message(m: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-shaped message as a GenAI semantic-conventions message (role + parts)."""
    parts: list[dict[str, Any]] = []
    content = m.get("content")
    if m.get("role") == "tool":
        parts.append(
            {"type": "tool_call_response", "id": m.get("tool_call_id", ""), "response": content}
        )
    elif isinstance(content, list):
        for p in content:
            if p.get("type") == "text":
                parts.append({"type": "text", "content": p.get("text", "")})
            else:
                parts.append({"type": "uri", "modality": "image", "uri": str(p.get("image_url"))})
    elif content:
        parts.append({"type": "text", "content": content})
    for c in m.get("tool_calls") or ():
        fn = c["function"]
        parts.append(
            {
                "type": "tool_call",
                "id": c["id"],
                "name": fn["name"],
                "arguments": loads_or(fn["arguments"], fn["arguments"]),
            }
        )
    return {"role": m.get("role", "user"), "parts": parts}


def _usage(usage: Any) -> dict[str, Any]:
    if not isinstance(usage, dict):
        return {}
    if usage.get("normalized") is True:  # an import's usage: all input, cache included
        inp, out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    else:
        inp = usage.get("input_tokens", usage.get("prompt_tokens"))
        out = usage.get("output_tokens", usage.get("completion_tokens"))
    result: dict[str, Any] = {}
    if isinstance(inp, int):
        result["gen_ai.usage.input_tokens"] = inp
    if isinstance(out, int):
        result["gen_ai.usage.output_tokens"] = out
    cached = usage.get("cached_tokens")
    if usage.get("normalized") is True and isinstance(cached, int):
        result["gen_ai.usage.cache_read.input_tokens"] = cached
    return result


class _Builder:
    def __init__(self, r: Reader, trace_id: str) -> None:
        self.r = r
        self.trace = r.trace(trace_id)
        self.tid = _id("trace", trace_id)
        self.root = _id(self.tid, "agent", "main", size=8)
        self.spans: list[dict[str, Any]] = []
        self.agent_spans: dict[str, str] = {"": self.root}
        self.bounds: dict[str, list[float]] = {}
        self.names: dict[str, str] = {}

    def span(
        self,
        name: str,
        span_id: str,
        parent: str | None,
        start: float,
        end: float,
        kind: int,
        attributes: dict[str, Any],
        events: list[dict[str, Any]] | None = None,
        error: str | None = None,
    ) -> None:
        s: dict[str, Any] = {
            "traceId": self.tid,
            "spanId": span_id,
            "name": name,
            "kind": kind,
            "startTimeUnixNano": _nanos(start),
            "endTimeUnixNano": _nanos(max(end, start)),
            "attributes": _attrs(attributes),
        }
        if parent:
            s["parentSpanId"] = parent
        if events:
            s["events"] = events
        if error:
            s["status"] = {"code": 2, "message": error}
        self.spans.append(s)

    def agent_span(self, m: Message | LlmCall) -> str:
        branch = getattr(m, "branch_id", None) or ""
        if m.branch_type != "subagent":
            branch = ""
        sid = self.agent_spans.get(branch)
        if sid is None:
            sid = self.agent_spans[branch] = _id(self.tid, "agent", branch, size=8)
        when = m.created_at
        lo_hi = self.bounds.setdefault(branch, [when, when])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], when), max(lo_hi[1], when)
        if branch:
            self.names[branch] = m.agent_name
        return sid

    def chat(self, call: LlmCall, response: Message | None) -> None:
        view = call_view(self.r, call)
        inp = [semconv_message(m) for m in view.openai()]
        out = []
        if response is not None:
            msg = semconv_message(response.to_openai())
            msg["finish_reason"] = "tool_call" if response.tool_calls else "stop"
            out.append(msg)
        start = call.created_at
        end = start + (call.latency_ms or 0.0) / 1000.0
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": call.model or None,
            "gen_ai.response.model": call.model or None,
            "gen_ai.conversation.id": self.trace.id,
            "gen_ai.agent.name": call.agent_name,
            "gen_ai.input.messages": json.dumps(inp, ensure_ascii=False),
            "gen_ai.output.messages": json.dumps(out, ensure_ascii=False) if out else None,
            "ctxlens.call_index": call.call_index,
            "ctxlens.request_sha256": call.request_sha256,
            **_usage(call.usage),
        }
        parent = self.agent_span(response if response is not None else call)
        self.span(
            f"chat {call.model}".strip(),
            _id(self.tid, "call", call.call_index, size=8),
            parent,
            start,
            end,
            SPAN_KIND_CLIENT,
            attributes,
            error=call.error,
        )

    def reply(self, m: Message) -> None:
        msg = semconv_message(m.to_openai())
        msg["finish_reason"] = "tool_call" if m.tool_calls else "stop"
        model = (m.metadata or {}).get("model") if isinstance(m.metadata, dict) else None
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.response.model": model,
            "gen_ai.conversation.id": self.trace.id,
            "gen_ai.agent.name": m.agent_name,
            "gen_ai.output.messages": json.dumps([msg], ensure_ascii=False),
            "ctxlens.message_sequence": m.sequence,
            **_usage(m.usage),
        }
        parent = self.agent_span(m)
        self.span(
            f"chat {model or ''}".strip(),
            _id(self.tid, "msg", m.sequence, size=8),
            parent,
            m.created_at,
            m.created_at,
            SPAN_KIND_CLIENT,
            attributes,
        )

    def tool(self, m: Message, calls: dict[str, tuple[str, str]]) -> None:
        name, args = calls.get(m.tool_call_id or "", (m.name or "", ""))
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name or m.name,
            "gen_ai.tool.call.id": m.tool_call_id,
            "gen_ai.tool.call.arguments": args or None,
            "gen_ai.tool.call.result": m.content,
            "gen_ai.conversation.id": self.trace.id,
            "ctxlens.message_sequence": m.sequence,
        }
        error = (
            "tool error" if isinstance(m.metadata, dict) and m.metadata.get("is_error") else None
        )
        self.span(
            f"execute_tool {name or m.name or ''}".strip(),
            _id(self.tid, "tool", m.sequence, size=8),
            self.agent_span(m),
            m.created_at,
            m.created_at,
            SPAN_KIND_INTERNAL,
            attributes,
            error=error,
        )

    def agents(self, compactions: list[CompactionEvent]) -> None:
        for branch, sid in self.agent_spans.items():
            lo, hi = self.bounds.get(branch, [self.trace.created_at, self.trace.created_at])
            name = self.names.get(branch, "main") if branch else "main"
            events = [] if branch else [self._compaction_event(c) for c in compactions]
            self.span(
                f"invoke_agent {name}",
                sid,
                None if not branch else self.root,
                lo,
                hi,
                SPAN_KIND_INTERNAL,
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": name,
                    "gen_ai.conversation.id": self.trace.id,
                    "ctxlens.trace.title": self.trace.title if not branch else None,
                    "ctxlens.trace.source": self.trace.source if not branch else None,
                },
                events=events,
            )

    def _compaction_event(self, c: CompactionEvent) -> dict[str, Any]:
        return {
            "timeUnixNano": _nanos(c.created_at),
            "name": "ctxlens.compaction",
            "attributes": _attrs(
                {
                    "ctxlens.compaction.level": c.level,
                    "ctxlens.compaction.trigger": c.trigger,
                    "ctxlens.compaction.at_sequence": c.at_sequence,
                    "ctxlens.compaction.tokens_before": c.tokens_before,
                    "ctxlens.compaction.tokens_after": c.tokens_after,
                    "ctxlens.compaction.removed_messages": len(c.removed),
                }
            ),
        }


def build(r: Reader, trace_id: str) -> dict[str, Any]:
    """The OTLP JSON document for one trace (an ``ExportTraceServiceRequest``)."""
    tid = r.find_trace(trace_id).id
    b = _Builder(r, tid)
    calls = r.llm_calls(tid)
    by_response = {c.response_sequence: c for c in calls if c.response_sequence is not None}
    responses = r.messages(tid, list(by_response))
    tool_calls: dict[str, tuple[str, str]] = {}
    for m in r.all_messages(tid):
        for tc in m.tool_calls:
            tool_calls[tc.id] = (tc.name, tc.arguments)
        if m.kind in ("meta",):
            continue
        if m.role == "assistant" and m.sequence not in by_response:
            b.reply(m)
        elif m.role == "tool":
            b.tool(m, tool_calls)
    for c in calls:
        b.chat(c, responses.get(c.response_sequence) if c.response_sequence is not None else None)
    b.agents(r.compactions(tid))
    b.spans.sort(key=lambda s: (int(s["startTimeUnixNano"]), s["spanId"]))
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": _attrs({"service.name": "ctxlens", "ctxlens.trace.id": tid})
                },
                "scopeSpans": [{"scope": SCOPE, "spans": b.spans}],
            }
        ]
    }


def iter_export(store: Store, trace_id: str) -> Iterator[str]:
    with store.read() as r:
        yield json.dumps(build(r, trace_id), ensure_ascii=False)
        yield "\n"


def write_export(store: Store, trace_id: str, out: IO[str]) -> None:
    for chunk in iter_export(store, trace_id):
        out.write(chunk)
