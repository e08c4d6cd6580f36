"""OpenTelemetry GenAI traces: spans → messages, tool calls, LLM calls and agents.

Spans are grouped by trace and ordered by start time (a trace's spans arrive in any
order, so one file's spans are held in memory; attributes only). Each LLM span (GenAI
``gen_ai.operation.name`` chat/…, OpenInference ``LLM``, Langfuse ``GENERATION``) is one
LLM call: its input messages are matched to messages already stored (new ones are
appended), its output becomes the assistant message, and the call keeps the exact context.
Message content is read from, in order: ``gen_ai.input.messages``/``gen_ai.output.messages``
(current semantic conventions), indexed ``gen_ai.prompt.N.*``/``gen_ai.completion.N.*``
(older), OpenInference ``llm.input_messages.N.*``/``llm.output_messages.N.*``,
``gen_ai.*.message`` span events, and the observation input/output of Langfuse exports.
A span without input falls back to the conversation so far. Tool spans become tool results
(paired by ``gen_ai.tool.call.id``, else by tool name with the open calls); agent spans
name the agent, and an agent run that does not continue the main conversation becomes a
``subagent`` branch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError
from core.importers.base import ImportContext, ImportResult, ImportUnit, TraceBuilder
from core.importers.content import as_dict, as_list, dumps, json_or_text, scrub, text_of
from core.importers.jsonstream import JsonDocument
from core.importers.non_traces import chatml_entry, chatml_refusal
from core.importers.otel_spans import Span, langfuse_spans, otlp_spans, sdk_span
from core.importers.reading import CountingReader, iter_jsonl
from core.records import ROLES, ContextItem, NewMessage, ToolCall
from core.store.writer import Writer

FORMAT = "otel"
MsgDict = dict[str, Any]
EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


# -- message normalisation --------------------------------------------------------------
def _msg(
    role: str,
    content: str = "",
    calls: list[MsgDict] | None = None,
    call_id: str | None = None,
    thinking: str = "",
    name: str | None = None,
) -> MsgDict:
    return {
        "role": role,
        "content": content,
        "calls": calls or [],
        "call_id": call_id,
        "thinking": thinking,
        "name": name,
    }


def normalize(value: Any, default_role: str = "user") -> list[MsgDict] | None:
    """Messages in any of the shapes GenAI instrumentations log, as one internal shape."""
    value = json_or_text(value)
    if isinstance(value, str):
        return [_msg(default_role, value)] if value else None
    if isinstance(value, dict):
        if isinstance(value.get("messages"), list):
            value = value["messages"]
        elif isinstance(value.get("output"), list) and value.get("object") == "response":
            items = list(value["output"])
            if value.get("instructions") and default_role == "user":
                items.insert(0, {"role": "system", "content": value["instructions"]})
            value = items
        elif "role" in value or "type" in value or "tool.name" in value:
            value = [value]
        else:
            return None
    if not isinstance(value, list):
        return None
    out: list[MsgDict] = []
    for item in value:
        out.extend(_one(item, default_role))
    return out or None


def _one(item: Any, default_role: str) -> list[MsgDict]:
    if isinstance(item, str):
        return [_msg(default_role, item)]
    d = as_dict(item)
    kind = d.get("type")
    if "tool.name" in d:  # any-agent output
        return [
            _msg(
                "assistant",
                calls=[_call(None, d["tool.name"], d.get("tool.args") or {})],
            )
        ]
    if kind == "function_call":
        return [
            _msg(
                "assistant",
                calls=[
                    _call(d.get("call_id") or d.get("id"), d.get("name"), d.get("arguments") or {})
                ],
            )
        ]
    if kind in ("function_call_output", "custom_tool_call_output"):
        return [_msg("tool", text_of(d.get("output")), call_id=str(d.get("call_id") or ""))]
    if kind == "reasoning":
        summary = "\n".join(text_of(s) for s in as_list(d.get("summary")))
        return [_msg("assistant", thinking=summary)]
    role = str(d.get("role") or default_role).lower()
    role = {"human": "user", "ai": "assistant", "model": "assistant", "developer": "system"}.get(
        role, role
    )
    if role not in ROLES:
        role = default_role
    if isinstance(d.get("parts"), list):
        return _parts(role, d["parts"])
    content = d.get("content")
    calls = [_openai_call(c) for c in as_list(d.get("tool_calls"))]
    if isinstance(content, list):
        return _blocks(role, content, calls, d)
    text = text_of(json_or_text(content)) if not isinstance(content, str) else content
    return [
        _msg(
            role,
            text or "",
            calls,
            str(d.get("tool_call_id") or d.get("id") or "") if role == "tool" else None,
            name=d.get("name") if isinstance(d.get("name"), str) else None,
        )
    ]


def _openai_call(c: Any) -> MsgDict:
    c = as_dict(c)
    fn = c.get("function")
    name = fn.get("name") if isinstance(fn, dict) else (fn or c.get("name"))
    args = fn.get("arguments") if isinstance(fn, dict) else c.get("arguments")
    return _call(c.get("id"), name, args if args is not None else {})


def _call(call_id: Any, name: Any, arguments: Any) -> MsgDict:
    """One tool call as the message dicts carry it (arguments as JSON text)."""
    return {"id": call_id, "name": str(name or ""), "arguments": dumps(arguments)}


def _parts(role: str, parts: list[Any]) -> list[MsgDict]:
    """Current semantic conventions: ``{role, parts: [{type: text|tool_call|…}]}``."""
    texts: list[str] = []
    calls: list[MsgDict] = []
    results: list[MsgDict] = []
    thinking: list[str] = []
    for p in parts:
        p = as_dict(p)
        kind = p.get("type")
        if kind == "text":
            texts.append(
                str(p.get("content") if p.get("content") is not None else p.get("text") or "")
            )
        elif kind == "tool_call":
            calls.append(_call(p.get("id"), p.get("name"), p.get("arguments") or {}))
        elif kind == "tool_call_response":
            results.append(
                _msg(
                    "tool",
                    text_of(json_or_text(p.get("response") or p.get("result"))),
                    call_id=str(p.get("id") or ""),
                )
            )
        elif kind in ("reasoning", "thinking"):
            thinking.append(str(p.get("content") or ""))
    out = list(results)
    if texts or calls or thinking or not results:
        out.append(_msg(role, "\n".join(texts), calls, thinking="\n".join(thinking)))
    return out


def _blocks(role: str, content: list[Any], calls: list[MsgDict], d: MsgDict) -> list[MsgDict]:
    """Anthropic/OpenAI content blocks, splitting tool results into tool messages."""
    texts: list[str] = []
    results: list[MsgDict] = []
    thinking: list[str] = []
    for b in content:
        b = as_dict(b) if not isinstance(b, str) else {"type": "text", "text": b}
        kind = b.get("type")
        if kind == "tool_use":
            calls.append(_call(b.get("id"), b.get("name"), b.get("input") or {}))
        elif kind == "tool_result":
            results.append(
                _msg("tool", text_of(b.get("content")), call_id=str(b.get("tool_use_id") or ""))
            )
        elif kind in ("thinking", "reasoning"):
            thinking.append(str(b.get("thinking") or b.get("reasoning") or ""))
        else:
            t = text_of(b)
            if t:
                texts.append(t)
    out = list(results)
    if texts or calls or thinking or not results:
        call_id = str(d.get("tool_call_id") or "") if role == "tool" else None
        out.append(_msg(role, "\n".join(texts), calls, call_id, "\n".join(thinking)))
    return out


def unflatten(attrs: dict[str, Any], prefix: str) -> list[Any]:
    """``prefix.0.a.b = v`` attributes as ``[{"a": {"b": v}}]`` (numeric parts are lists)."""
    tree: dict[Any, Any] = {}
    found = False
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        found = True
        node = tree
        parts = key[len(prefix) :].split(".")
        for i, part in enumerate(parts):
            k: Any = int(part) if part.isdigit() else part
            if i == len(parts) - 1:
                node[k] = value
            else:
                node = node.setdefault(k, {})
                if not isinstance(node, dict):
                    break
    result = _lists(tree) if found else []
    return result if isinstance(result, list) else []


def _lists(node: Any) -> Any:
    if isinstance(node, dict):
        if node and all(isinstance(k, int) for k in node):
            return [_lists(node[k]) for k in sorted(node)]
        return {k: _lists(v) for k, v in node.items()}
    return node


def _indexed(entries: list[Any]) -> list[MsgDict]:
    """Unflattened OpenInference / old GenAI message entries as internal messages."""
    out: list[MsgDict] = []
    for e in entries:
        e = as_dict(e)
        m = as_dict(e.get("message")) or e
        text = m.get("content")
        contents = as_list(m.get("contents"))
        if text is None and contents:
            text = "\n".join(
                str(as_dict(as_dict(c).get("message_content")).get("text") or "") for c in contents
            )
        calls = []
        for c in as_list(m.get("tool_calls")):
            c = as_dict(as_dict(c).get("tool_call")) or as_dict(c)
            fn = as_dict(c.get("function"))
            name = fn.get("name") or c.get("name") or ""
            args = fn.get("arguments") or c.get("arguments") or {}
            calls.append(
                {
                    "id": c.get("id"),
                    "type": "function",
                    "function": {"name": str(name), "arguments": args},
                }
            )
        body = {
            "role": m.get("role") or "user",
            "content": json_or_text(text) if text is not None else "",
            "tool_calls": calls,
            "tool_call_id": m.get("tool_call_id") or m.get("tool_call.id"),
        }
        out.extend(_one(body, "user"))
    return out


def input_messages(s: Span) -> list[MsgDict] | None:
    a = s.attrs
    found = (
        normalize(a.get("gen_ai.input.messages"))
        or normalize(s.input)
        or _indexed(unflatten(a, "gen_ai.prompt."))
        or _indexed(unflatten(a, "llm.input_messages."))
        or _event_messages(s, output=False)
        or normalize(a.get("gen_ai.prompt"))
        or normalize(a.get("ai.prompt.messages"))
    )
    if found is None:
        return None
    system = a.get("gen_ai.system_instructions")
    sys_msgs = normalize(system, "system") if system else None
    if not sys_msgs:
        sys_msgs = [
            m for m in _indexed(unflatten(a, "llm.input_messages.")) if m["role"] == "system"
        ]
    if sys_msgs and not any(m["role"] == "system" for m in found):
        found = [*[dict(m, role="system") for m in sys_msgs], *found]
    return found


def output_messages(s: Span) -> list[MsgDict] | None:
    a = s.attrs
    return (
        normalize(a.get("gen_ai.output.messages"), "assistant")
        or normalize(s.output, "assistant")
        or _indexed(unflatten(a, "gen_ai.completion."))
        or _indexed(unflatten(a, "llm.output_messages."))
        or _event_messages(s, output=True)
        or normalize(a.get("output.value"), "assistant")
        or normalize(a.get("gen_ai.completion"), "assistant")
        or _raw_output(a.get("gen_ai.output"))
        or normalize(a.get("ai.response.text"), "assistant")
    )


def _raw_output(value: Any) -> list[MsgDict] | None:
    """``gen_ai.output`` (any-agent): tool calls as a JSON list, or the final answer as
    text or JSON, which is the reply itself."""
    if value is None or value == "null":
        return None
    found = normalize(value, "assistant")
    if found and any(m["calls"] for m in found):
        return found
    return [_msg("assistant", value if isinstance(value, str) else dumps(value))]


def _event_messages(s: Span, output: bool) -> list[MsgDict] | None:
    out: list[MsgDict] = []
    for e in s.events:
        name = str(e.get("name") or "")
        attrs = as_dict(e.get("attributes"))
        if output and name == "gen_ai.choice":
            msg = json_or_text(attrs.get("message")) or {
                "role": "assistant",
                "content": attrs.get("content"),
            }
            out.extend(normalize(msg, "assistant") or [])
        elif not output and name in EVENT_ROLES:
            role = EVENT_ROLES[name]
            body = {
                "role": role,
                "content": json_or_text(attrs.get("content")),
                "tool_calls": json_or_text(attrs.get("tool_calls")),
                "tool_call_id": attrs.get("id"),
            }
            out.extend(_one(body, role))
    return out or None


def merge_reply(messages: list[MsgDict]) -> MsgDict | None:
    """An output list (text, reasoning, tool calls) as one assistant message."""
    replies = [m for m in messages if m["role"] == "assistant"]
    if not replies:
        return None
    return _msg(
        "assistant",
        "\n\n".join(m["content"] for m in replies if m["content"]),
        [c for m in replies for c in m["calls"]],
        thinking="\n\n".join(m["thinking"] for m in replies if m["thinking"]),
    )


def usage_of(s: Span) -> dict[str, Any] | None:
    a = s.attrs
    u = s.usage or {}
    inp = a.get(
        "gen_ai.usage.input_tokens",
        a.get("gen_ai.usage.prompt_tokens", a.get("llm.token_count.prompt", u.get("input"))),
    )
    out = a.get(
        "gen_ai.usage.output_tokens",
        a.get(
            "gen_ai.usage.completion_tokens", a.get("llm.token_count.completion", u.get("output"))
        ),
    )
    if inp is None and out is None:
        return None
    usage: dict[str, Any] = {"input_tokens": _int(inp), "output_tokens": _int(out)}
    read, write = (_int(_attr(a, *keys)) for keys in (CACHE_READ, CACHE_WRITE))
    if read is not None or write is not None:
        # the GenAI conventions count both inside ``input_tokens``; an emitter whose
        # cache figures exceed it counts them apart (Anthropic's own usage does)
        base = usage["input_tokens"] or 0
        if (read or 0) + (write or 0) > base:
            usage["input_tokens"] = base + (read or 0) + (write or 0)
        usage["cached_tokens"] = read or 0
        usage["cache_creation_tokens"] = write or 0
    total = a.get("llm.token_count.total", u.get("total"))
    if total is not None:
        usage["total_tokens"] = _int(total)
    for k in ("gen_ai.usage.input_cost", "gen_ai.usage.output_cost"):
        if k in a:
            usage[k.rsplit(".", 1)[1]] = a[k]
    return usage


CACHE_READ = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.input_tokens.cached",
)
"""Where a span records its input tokens served from the provider's cache (the GenAI
conventions' name first, then the older ones)."""
CACHE_WRITE = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "gen_ai.usage.input_tokens.cache_write",
)
"""Where a span records its input tokens written to the provider's cache."""


def _attr(attrs: dict[str, Any], *keys: str) -> Any:
    return next((attrs[k] for k in keys if k in attrs), None)


def _recorded_cost(b: TraceBuilder, spans: list[Span]) -> None:
    """The spans' ``gen_ai.usage.*_cost`` summed into the trace's ``recorded_cost`` (read
    by ``core/cost/compute.py:recorded_cost_text``); a cost that is not a number spoils it."""
    usages = [u for u in map(usage_of, spans) if u and ("input_cost" in u or "output_cost" in u)]
    costs = [u.get(k, 0) for u in usages for k in ("input_cost", "output_cost")]
    if usages and all(isinstance(c, (int, float)) and c == c and c >= 0 for c in costs):
        recorded = {"usd": sum(costs), "calls": len(usages), "source": "OTel gen_ai.usage"}
        b.metadata = {**(b.metadata or {}), "recorded_cost": recorded}
        b.w.update_trace_metadata(b.trace_id, b.metadata)


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def model_of(s: Span) -> str:
    a = s.attrs
    return str(
        s.model
        or a.get("gen_ai.response.model")
        or a.get("gen_ai.request.model")
        or a.get("llm.model_name")
        or ""
    )


# -- reconstruction ---------------------------------------------------------------------
@dataclass
class _Lane:
    branch_type: str | None
    branch_id: str | None
    agent_name: str
    tail: int | None = None
    by_key: dict[str, int] = field(default_factory=dict)
    seqs: list[int] = field(default_factory=list)
    open_calls: list[tuple[str, str]] = field(default_factory=list)


def _key(m: MsgDict) -> str:
    if m["role"] == "tool" and m.get("call_id"):
        raw = f"tool\0{m['call_id']}"
    else:
        calls = "|".join(
            f"{c.get('id') or ''}:{c['name']}:{c['arguments'] if not c.get('id') else ''}"
            for c in m["calls"]
        )
        raw = f"{m['role']}\0{m['content'].strip()}\0{calls}"
    return hashlib.sha1(raw.encode("utf-8", "replace")).hexdigest()


class _Trace:
    def __init__(self, b: TraceBuilder, ctx: ImportContext, spans: list[Span]) -> None:
        self.b = b
        self.ctx = ctx
        self.by_id = {s.span_id: s for s in spans}
        self.agent_of: dict[str, Span | None] = {}
        self.lanes: dict[str, _Lane] = {}
        self.main: _Lane | None = None

    def agent(self, s: Span) -> Span | None:
        """The nearest agent span above ``s`` (or ``s`` itself)."""
        seen: set[str] = set()
        cur: Span | None = s
        while cur is not None and cur.span_id not in seen:
            if cur.span_id in self.agent_of:
                return self.agent_of[cur.span_id]
            seen.add(cur.span_id)
            if cur.kind == "agent":
                break
            cur = self.by_id.get(cur.parent_id or "")
        for sid in seen:
            self.agent_of[sid] = cur
        return cur

    def lane(self, s: Span, first_input: list[MsgDict] | None) -> _Lane:
        agent = self.agent(s)
        key = agent.span_id if agent is not None else "main"
        lane = self.lanes.get(key)
        if lane is not None:
            return lane
        # no agent span (yet: live capture gets it after its children) names the agent
        # from the span's own gen_ai.agent.name, as pydantic-ai sets it on every span
        name = (
            agent.agent_name
            if agent is not None
            else str(s.attrs.get("gen_ai.agent.name") or "main")
        )
        if self.main is None:
            lane = self.main = _Lane(None, None, name)
        elif first_input and all(_key(m) in self.main.by_key for m in first_input[:2]):
            lane = self.main  # a later run that continues the same conversation
        else:
            lane = _Lane("subagent", key[:64], name, tail=self.main.tail)
        self.lanes[key] = lane
        return lane

    def add(self, lane: _Lane, m: MsgDict, span: Span) -> int:
        if m["role"] == "tool" and not m.get("call_id"):
            match = next((c for c in lane.open_calls if c[1] == m.get("name")), None)
            if match is None and lane.open_calls:
                match = lane.open_calls[0]
            m = dict(m, call_id=match[0] if match else f"call-{span.span_id}")
        k = _key(m)
        seq = lane.by_key.get(k)
        if seq is not None:
            return seq
        calls = []
        for i, c in enumerate(m["calls"]):
            cid = str(c.get("id") or f"call-{span.span_id}-{i}")
            calls.append(ToolCall(cid, c["name"], c["arguments"]))
            lane.open_calls.append((cid, c["name"]))
        call_id = m.get("call_id")
        name = m.get("name")
        if m["role"] == "tool":
            match = next((c for c in lane.open_calls if c[0] == call_id), None)
            if match is not None:
                lane.open_calls.remove(match)
                name = name or match[1]
        parts = (
            (
                {"type": "text", "text": m["content"]},
                {"type": "thinking", "thinking": m["thinking"]},
            )
            if m["thinking"]
            else None
        )
        nm = NewMessage(
            m["role"],
            m["content"],
            parts=parts,
            tool_calls=tuple(calls),
            tool_call_id=call_id if m["role"] == "tool" else None,
            name=name if m["role"] == "tool" else None,
            kind="thinking" if m["thinking"] and not m["content"] and not calls else "message",
            branch_type=lane.branch_type,
            branch_id=lane.branch_id,
            agent_name=lane.agent_name,
            created_at=span.start or None,
            metadata={"span_id": span.span_id, "span": span.name},
        )
        seq = lane.tail = self.b.add(nm, lane.tail)
        lane.by_key[k] = seq
        if calls:  # the key a later input will use names the real call ids
            lane.by_key[
                _key(
                    dict(
                        m,
                        calls=[
                            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls
                        ],
                    )
                )
            ] = seq
        lane.seqs.append(seq)
        return seq

    def llm(self, s: Span) -> None:
        inp = input_messages(s)
        lane = self.lane(s, inp)
        if inp:
            items = [ContextItem(self.add(lane, m, s)) for m in inp]
        else:
            items = [ContextItem(q) for q in lane.seqs]
        out = output_messages(s)
        reply = merge_reply(out) if out else None
        response = self.add(lane, reply, s) if reply is not None else None
        end = s.end if s.end is not None else s.start
        self.b.llm_call(
            items,
            model=model_of(s),
            head_sequence=items[-1].sequence if items else None,
            response_sequence=response,
            usage=usage_of(s),
            latency_ms=max(0.0, (end - s.start) * 1000) if s.start else None,
            error=s.status or None,
            agent_name=lane.agent_name,
            branch_type=lane.branch_type,
            created_at=s.start,
            params={
                "span_id": s.span_id,
                "span": s.name,
                "context": "logged" if inp else "reconstructed",
            },
        )

    def tool(self, s: Span) -> None:
        a = s.attrs
        lane = self.lane(s, None)
        name = str(
            a.get("gen_ai.tool.name") or a.get("tool.name") or s.name.removeprefix("running tool: ")
        )
        call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id")
        result = a.get(
            "gen_ai.tool.call.result",
            a.get("tool_response", a.get("gen_ai.output", a.get("output.value"))),
        )
        if result is None:
            result = s.output
        text = text_of(json_or_text(result)) if not isinstance(result, str) else result
        self.add(lane, _msg("tool", text, call_id=str(call_id) if call_id else None, name=name), s)

    def run(self, spans: list[Span]) -> None:
        for s in spans:
            self.ctx.check()
            kind = s.kind
            if kind == "llm":
                self.llm(s)
            elif kind == "tool":
                self.tool(s)


# -- reading ----------------------------------------------------------------------------
@dataclass
class _Collected:
    spans: dict[str, list[Span]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    chatml: dict[str, Any] = field(default_factory=dict)
    observations: list[Any] = field(default_factory=list)

    def add(self, spans: Iterator[Span]) -> None:
        for s in spans:
            self.spans.setdefault(s.trace_id, []).append(s)

    def count(self) -> int:
        return sum(len(v) for v in self.spans.values())


def _collect(path: Path, ctx: ImportContext) -> _Collected:
    got = _Collected()
    with path.open("rb") as raw:
        head = raw.read(1 << 16).lstrip()
    first, sep, rest = head.partition(b"\n")
    if sep and rest.strip() and first.strip() not in (b"{", b"["):
        for lineno, value in iter_jsonl(path, ctx):
            ctx.where = f"{path}:{lineno}"
            got.add(otlp_spans(as_dict(value), got.count()))
        return got
    with path.open("rb") as raw:
        doc = JsonDocument(CountingReader(raw, ctx), str(path))
        if doc.begin() == "[":
            for i, item in enumerate(doc.items()):
                ctx.where = f"{path}: [{i}]"
                _list_item(got, as_dict(item), ctx.where)
        else:
            trace: dict[str, Any] = {}
            for key in doc.members():
                ctx.where = f"{path}: {key}"
                if key in ("resourceSpans", "spans", "observations") and doc.enter_array():
                    for item in doc.items():
                        if key == "resourceSpans":
                            got.add(otlp_spans({"resourceSpans": [item]}, got.count()))
                        elif key == "spans":
                            got.add(iter([sdk_span(as_dict(item), got.count())]))
                        else:
                            got.observations.append(item)
                elif key == "trace":
                    trace = as_dict(doc.value())
                else:
                    value = doc.value()
                    if chatml_entry(value):
                        got.chatml[key] = value
                    else:
                        got.meta[key] = value
            if got.observations or trace:
                got.add(langfuse_spans(trace, got.observations))
                got.meta["langfuse_trace"] = {
                    k: trace.get(k) for k in ("id", "name", "timestamp", "tags") if k in trace
                }
        doc.end()
    return got


def _list_item(got: _Collected, item: dict[str, Any], where: str) -> None:
    if "resourceSpans" in item:
        got.add(otlp_spans(item, got.count()))
    elif "attributes" in item or "context" in item or "spanContext" in item:
        got.add(iter([sdk_span(item, got.count())]))
    else:
        raise InvalidInputError(f"{where}: expected spans (with 'attributes') in the list")


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    path = unit.main
    got = _collect(path, ctx)
    if got.chatml and not got.spans:  # forced ``--format otel`` on chat messages
        raise InvalidInputError(chatml_refusal(path, len(got.chatml)))
    if not got.spans:
        raise InvalidInputError(f"{path}: no spans found")
    results = []
    for tid, spans in got.spans.items():
        spans.sort(key=lambda s: (s.start, s.order))
        roots = [
            s for s in spans if not s.parent_id or s.parent_id not in {x.span_id for x in spans}
        ]
        lf = as_dict(got.meta.get("langfuse_trace"))
        title = str(lf.get("name") or (roots[0].name if roots else "") or path.stem)
        meta = scrub(
            {
                "trace_id": tid,
                "spans": len(spans),
                **{k: v for k, v in got.meta.items() if k != "final_output"},
            }
        )
        b = TraceBuilder(w, ctx, FORMAT, str(unit.path), title, meta, spans[0].start or None)
        t = _Trace(b, ctx, spans)
        t.run(spans)
        for s in spans:  # agent and tool spans too, and where each ended: the trace's span
            b.saw_time(s.start)  # is the first start to the last end (an any-agent run's
            b.saw_time(s.end)  # invoke_agent outlasts its last call_llm)
        _recorded_cost(b, spans)
        if b.messages == 0:
            ctx.warn(f"{path}: trace {tid} has no LLM or tool spans with content")
        if not lf.get("name"):  # a span name says what ran, the request what it was for
            b.set_title(b.first_text() or title)
        results.append(b.finish())
    return results
