"""OpenAI chat message lists: what most agent frameworks log.

Accepted shapes: a JSON list of messages; ``{"messages": [...]}`` (with ``tools``, and a
``response`` chat completion in OpenHands/LiteLLM completion logs, which also becomes an
LLM call with its usage and latency); JSON Lines of messages (one trace) or of
``{"messages": [...]}`` objects (one trace per line); a JSON list of conversations (lists of
messages, or objects with ``messages``/``traj`` and other keys kept as metadata, as
benchmark histories such as tau-bench's hold them), one trace each. Messages use the
chat-completions shape: ``role``, ``content`` (text or parts), ``tool_calls``,
``tool_call_id``, ``name``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.errors import InvalidInputError
from core.importers.base import ImportContext, ImportResult, ImportUnit, TraceBuilder
from core.importers.content import (
    as_dict,
    as_list,
    content_with_images,
    dumps,
    parse_time,
    scrub,
)
from core.importers.jsonstream import JsonDocument
from core.importers.reading import CountingReader, iter_jsonl
from core.records import ContextItem, NewMessage, ToolCall
from core.store.writer import Writer

FORMAT = "openai"
#: Where a benchmark history item keeps its conversation (``traj``: tau-bench).
TRAJECTORY_KEYS = ("messages", "traj")
ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
    "model": "assistant",
    "human": "user",
    "ai": "assistant",
}


class ChatWriter:
    """Appends OpenAI-shaped messages as one chain, pairing tool results with calls."""

    def __init__(self, b: TraceBuilder, parent: int | None = None, **defaults: Any) -> None:
        self.b = b
        self.tail = parent
        self.defaults = defaults
        self.call_names: dict[str, str] = {}
        self.open_calls: list[str] = []
        self.count = 0

    def add(self, m: Any, where: str, **extra: Any) -> int:
        nm = self.convert(m, where, **extra)
        self.tail = self.b.add(nm, self.tail)
        self.count += 1
        return self.tail

    def convert(self, m: Any, where: str, **extra: Any) -> NewMessage:
        if not isinstance(m, dict):
            raise InvalidInputError(
                f"{where}: a message must be an object, found {type(m).__name__}"
            )
        raw_role = m.get("role")
        role = ROLES.get(str(raw_role).lower()) if raw_role is not None else None
        if role is None:
            raise InvalidInputError(f"{where}: unknown message role {raw_role!r}")
        text, parts = self.content(m.get("content"), where)
        calls = tuple(self._calls(m, where)) if role == "assistant" else ()
        call_id = None
        name = m.get("name") if isinstance(m.get("name"), str) else None
        if role == "tool":
            call_id = m.get("tool_call_id") or m.get("tool_call_ids") or None
            if isinstance(call_id, list):
                call_id = call_id[0] if call_id else None
            if call_id is None and self.open_calls:
                call_id = self.open_calls[0]
            call_id = str(call_id) if call_id is not None else None
            if call_id in self.open_calls:
                self.open_calls.remove(call_id)
            name = name or self.call_names.get(call_id or "")
        kw: dict[str, Any] = dict(self.defaults)
        kw.update(extra)
        meta = kw.pop("metadata", None)
        if raw_role != role:
            meta = dict(meta or {}, role=raw_role)
        return NewMessage(
            role,  # type: ignore[arg-type]
            text,
            parts=parts,
            tool_calls=calls,
            tool_call_id=call_id,
            name=name,
            metadata=meta,
            **kw,
        )

    def content(self, value: Any, where: str) -> tuple[str, tuple[Any, ...] | None]:
        return content_with_images(self.b, value, where, _image_source)

    def _calls(self, m: dict[str, Any], where: str) -> Iterator[ToolCall]:
        raw = m.get("tool_calls")
        if raw is None and isinstance(m.get("function_call"), dict):
            raw = [{"id": f"call-{self.b.next_sequence}", "function": m["function_call"]}]
        for i, c in enumerate(as_list(raw)):
            if not isinstance(c, dict):
                raise InvalidInputError(f"{where}: tool_calls[{i}] must be an object")
            fn = c.get("function")
            name = (
                fn.get("name")
                if isinstance(fn, dict)
                else fn
                if isinstance(fn, str)
                else c.get("name")
            )
            args = fn.get("arguments") if isinstance(fn, dict) else c.get("arguments")
            call_id = str(c.get("id") or f"call-{self.b.next_sequence}-{i}")
            call = ToolCall(call_id, str(name or ""), dumps(args if args is not None else {}))
            self.call_names[call.id] = call.name
            self.open_calls.append(call.id)
            yield call


def _image_source(block: dict[str, Any]) -> list[str] | None:
    """The image of a Chat Completions (``image_url``) or Responses/Anthropic-style block."""
    kind = block.get("type")
    if kind == "image_url":
        url = as_dict(block.get("image_url")).get("url") or block.get("image_url")
        return [str(url or "")]
    if kind in ("image", "input_image"):
        src = (
            block.get("image") or block.get("image_url") or as_dict(block.get("source")).get("data")
        )
        return [str(src or "")]
    return None


def run(w: Writer, ctx: ImportContext, unit: ImportUnit) -> list[ImportResult]:
    path = unit.main
    with path.open("rb") as raw:
        head = raw.read(1 << 16).lstrip()
    if _is_jsonl(head):
        return _run_jsonl(w, ctx, unit, path)
    with path.open("rb") as raw:
        doc = JsonDocument(CountingReader(raw, ctx), str(path))
        top = doc.begin()
        trajectories: list[ImportResult] = []
        if top == "[":
            b, chat = None, None
            for i, m in enumerate(doc.items()):
                messages = _trajectory(m)
                if messages is not None and chat is None:
                    trajectories.append(_one_trajectory(w, ctx, unit, m, messages, i))
                    continue
                if trajectories:
                    raise InvalidInputError(
                        f"{path}: [{i}]: whole conversations and single messages mixed "
                        "at the top level"
                    )
                if chat is None:
                    b = TraceBuilder(w, ctx, FORMAT, str(unit.path), path.stem)
                    chat = ChatWriter(b)
                chat.add(m, f"{path}: messages[{i}]")
        else:
            b = TraceBuilder(w, ctx, FORMAT, str(unit.path), path.stem)
            chat = ChatWriter(b)
            _log_document(doc, b, chat, path)
        doc.end()
    if trajectories:
        return trajectories
    if b is None or chat is None:
        raise InvalidInputError(f"{path}: an empty list; no messages")
    if chat.count == 0:  # an empty trace would be a partial one: nothing is kept
        raise InvalidInputError(f"{path}: no messages; nothing imported")
    b.set_title(b.first_text() or path.stem)
    return [b.finish()]


def _trajectory(item: Any) -> list[Any] | None:
    """The messages of a list item that is a whole conversation (a list of messages, or an
    object with ``messages``, as benchmark histories hold them), else ``None``."""
    if isinstance(item, list):
        return item
    if isinstance(item, dict) and "role" not in item:
        for key in TRAJECTORY_KEYS:
            if isinstance(item.get(key), list):
                return list(item[key])
    return None


def _one_trajectory(
    w: Writer, ctx: ImportContext, unit: ImportUnit, item: Any, messages: list[Any], i: int
) -> ImportResult:
    """Trajectory ``i`` of a list: a trace of its own; an object's other keys are metadata."""
    path = unit.main
    ctx.source_begins()
    meta = (
        {k: v for k, v in item.items() if k not in TRAJECTORY_KEYS}
        if isinstance(item, dict)
        else {}
    )
    one = TraceBuilder(w, ctx, FORMAT, str(unit.path), f"{path.stem} #{i}", scrub(meta) or None)
    conv = ChatWriter(one)
    for j, m in enumerate(messages):
        conv.add(m, f"{path}: [{i}].messages[{j}]" if meta else f"{path}: [{i}][{j}]")
    if conv.count == 0:
        raise InvalidInputError(f"{path}: [{i}] is an empty conversation")
    one.set_title(one.first_text() or one.title)
    return one.finish()


def _log_document(doc: JsonDocument, b: TraceBuilder, chat: ChatWriter, path: Path) -> None:
    """``{"messages": [...], "response": {...}, ...}``: messages, then the logged call."""
    rest: dict[str, Any] = {}
    context: list[ContextItem] = []
    for key in doc.members():
        if key == "messages" and doc.enter_array():
            for i, m in enumerate(doc.items()):
                context.append(ContextItem(chat.add(m, f"{path}: messages[{i}]")))
        else:
            rest[key] = doc.value()
    if "role" in rest and "messages" not in rest:  # one message on its only line
        chat.add(rest, f"{path}:1")
        return
    response = as_dict(rest.get("response"))
    choice = as_dict((as_list(response.get("choices")) or [{}])[0])
    message = choice.get("message")
    meta = {k: v for k, v in rest.items() if k not in ("response", "tools", "kwargs")}
    b.metadata = scrub(meta) or None
    b.w.update_trace_metadata(b.trace_id, b.metadata)
    if not isinstance(message, dict):
        return
    resp = chat.add(
        message,
        f"{path}: response.choices[0].message",
        usage=response.get("usage"),
        created_at=parse_time(rest.get("timestamp")),
    )
    kwargs = as_dict(rest.get("kwargs"))
    params = {k: v for k, v in kwargs.items() if k not in ("messages", "tools", "extra_body")}
    tools = rest.get("tools") or kwargs.get("tools")
    if tools:
        params["tools"] = [as_dict(as_dict(t).get("function")).get("name") for t in as_list(tools)]
    if isinstance(tools, list) or isinstance(rest.get("tools"), list):  # sent: not in the
        params["tool_definitions"] = len(as_list(tools))  # messages (``gap_words``)
    latency = rest.get("latency_sec")
    b.llm_call(
        context,
        model=str(response.get("model") or kwargs.get("model") or ""),
        head_sequence=context[-1].sequence if context else None,
        response_sequence=resp,
        usage=response.get("usage"),
        latency_ms=float(latency) * 1000 if isinstance(latency, int | float) else None,
        created_at=parse_time(rest.get("timestamp")) or 0.0,
        params=scrub(params) or None,
    )


def _is_jsonl(head: bytes) -> bool:
    first, sep, rest = head.partition(b"\n")
    if not sep or not rest.strip() or first.strip() in (b"{", b"["):
        return False
    import json

    try:
        value = json.loads(first)
    except ValueError:
        return False
    return isinstance(value, dict)


def _run_jsonl(w: Writer, ctx: ImportContext, unit: ImportUnit, path: Path) -> list[ImportResult]:
    """JSON Lines: each line a message (one trace) or a ``{"messages": [...]}`` (a trace each)."""
    results: list[ImportResult] = []
    b: TraceBuilder | None = None
    chat: ChatWriter | None = None
    for lineno, value in iter_jsonl(path, ctx):
        where = f"{path}:{lineno}"
        ctx.where = where
        if isinstance(value, dict) and isinstance(value.get("messages"), list):
            ctx.source_begins()
            one = TraceBuilder(w, ctx, FORMAT, str(unit.path), f"{path.stem} #{lineno}")
            conv = ChatWriter(one)
            for i, m in enumerate(value["messages"]):
                conv.add(m, f"{where}: messages[{i}]")
            one.set_title(one.first_text() or one.title)
            results.append(one.finish())
            continue
        if b is None:
            ctx.source_begins()  # (lines of whole conversations after it count for it too)
            b = TraceBuilder(w, ctx, FORMAT, str(unit.path), path.stem)
            chat = ChatWriter(b)
        assert chat is not None
        chat.add(value, where)
    if b is not None:
        b.set_title(b.first_text() or path.stem)
        results.append(b.finish())
    if not results:
        raise InvalidInputError(f"{path}: no messages")
    return results
