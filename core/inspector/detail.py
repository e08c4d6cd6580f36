"""Message detail (UI-7): the body in its format, facts, tool call ↔ result links, raw record."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from core.context.view import NOT_SENT
from core.inspector.recorded_time import Basis, basis_of, created_text, zone_note
from core.json_text import loads_or
from core.records import Message
from core.store.paths import Segment
from core.store.reader import Reader
from core.undated import Undated, fill_words, undated_of


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    sequence: int
    row: int | None
    """Main-path row to jump to (``None``: the message is on another branch)."""


@dataclass(frozen=True)
class MessageDetail:
    message: Message
    body: str
    format: str
    """json | diff | python | markdown | text — picks the highlighter."""
    facts: tuple[tuple[str, str], ...]
    links: tuple[Link, ...]
    raw: str
    """The stored record as indented JSON."""
    time_note: str = ""
    """How the trace's times were read where the file wrote them without a zone
    (``core/inspector/recorded_time.py:zone_note``); "" where they carried it."""


def guess_format(text: str) -> str:
    s = text.lstrip()
    if s[:1] in ("{", "[") and _is_json(s):
        return "json"
    head = s[:400]
    if head.startswith(("diff --git", "--- ", "@@ ")) or "\n@@ " in head:
        return "diff"
    if "```" in head or head.startswith("#"):
        return "markdown"
    if head.startswith(("def ", "import ", "from ", "class ", "async def ")):
        return "python"
    return "text"


def _is_json(s: str) -> bool:
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


FIELDS_NOTE = "JSON fields, each text as it reads (the Raw record tab has the JSON as sent)"
"""The first line of a body shown field by field (``text_fields``)."""
TEXT_FIELD = 80
"""A string value this long holding a line break is text to read, not a JSON value."""


def pretty_body(msg: Message) -> tuple[str, str]:
    """``(body, format)``: the content (JSON re-indented, or field by field when it wraps a
    text: ``text_fields``), tool calls appended as JSON."""
    fmt = guess_format(msg.content)
    body = msg.content
    if fmt == "json":
        value = json.loads(msg.content)
        fields = text_fields(value)
        if fields is not None:
            body, fmt = fields, "text"
        else:
            body = json.dumps(value, indent=2, ensure_ascii=False)
    if msg.tool_calls:
        calls = [
            {"name": c.name, "id": c.id, "arguments": loads_or(c.arguments, c.arguments)}
            for c in msg.tool_calls
        ]
        block = json.dumps(calls, indent=2, ensure_ascii=False)
        body = block if not body.strip() else body + "\n\n" + block
        fmt = "json" if not msg.content.strip() else fmt
    return body, fmt


def text_fields(value: Any) -> str | None:
    """A JSON object that wraps a text (Codex's shell output ``{"output": "     1\\timport
    …\\n…", "metadata": {…}}``), field by field: each long multi-line string as its lines,
    the other values as compact JSON. Re-indented JSON showed such a text as one escaped
    line (``\\n``, ``\\t``: screenshot review). ``None`` for any other value."""
    if not isinstance(value, dict) or not any(
        isinstance(v, str) and len(v) >= TEXT_FIELD and "\n" in v for v in value.values()
    ):
        return None
    parts = [f"[{FIELDS_NOTE}]"]
    for key, v in value.items():
        if isinstance(v, str) and "\n" in v:
            parts.append(f"{key}:\n{v}")
        else:
            parts.append(f"{key}: {json.dumps(v, ensure_ascii=False)}")
    return "\n\n".join(parts)


def facts_of(
    msg: Message,
    on_path: bool = True,
    basis: Basis = None,
    undated: Undated | None = None,
) -> tuple[tuple[str, str], ...]:
    """The Message pane's facts; ``on_path``: whether the message is on the main path (a
    plain message off it is one a rewind abandoned, never "main"); ``basis``: the trace's
    ``time_basis`` (a time whose zone the file did not record is shown as it was written,
    and says so: ``core/inspector/recorded_time.py:created_text``); ``undated``: the
    trace's messages without a recorded time (``core/undated.py``), whose time is a fill,
    said so."""
    # the id (up to 22 characters) beside a short figure: beside the role it cut the
    # role ("assistan", screenshot review)
    out = [
        ("message", msg.message_id),
        ("counted", _tokens(msg)),
        ("role", msg.role + (f" ({msg.name})" if msg.name else "")),
        ("kind", msg.kind),
        ("goal", msg.goal_id or "—"),
        ("agent", msg.agent_name),
        ("branch", _branch(msg, on_path)),
        ("parent", "—" if msg.parent_sequence is None else str(msg.parent_sequence)),
        ("created", _created(msg, basis, undated)),
    ]
    if msg.usage:
        out.append(("usage", _usage(msg.usage)))
    timing = (msg.metadata or {}).get("latency_ms") if isinstance(msg.metadata, dict) else None
    if timing is not None:
        out.append(("latency", f"{timing} ms"))
    return tuple(out)


def _tokens(msg: Message) -> str:
    """The ``counted`` fact, ``1,005 tok``: the message's size in the context as ctxlens's
    tokenizer counts it (TOK-1), named so: as "tokens 1,005" above a reply's recorded
    ``completion_tokens 1,135`` it read as a second recording (screenshot review). A
    record never sent: ``0 (never sent)``."""
    if msg.kind in NOT_SENT and not msg.token_count:
        return "0 (never sent)"
    return f"{msg.token_count:,} tok"


def _created(msg: Message, basis: Basis, undated: Undated | None) -> str:
    """The recorded time (as the file wrote it where it gave no zone), or ``not recorded
    (trace start …)`` / ``(imported …)``."""
    if undated is not None and undated.covers(msg.sequence):
        return fill_words(undated.filled_with, msg.created_at)
    return created_text(msg.created_at, basis)


def _branch(msg: Message, on_path: bool) -> str:
    if msg.branch_type:
        return f"{msg.branch_type} {msg.branch_id or ''}".strip()
    return "main" if on_path else "abandoned by a rewind"


def _usage(usage: Any) -> str:
    """One recorded field a line, ``prompt_tokens 4,813``, nested details flattened
    (``prompt_tokens_details.cached_tokens 4,631``); fields recorded as null are left out
    (they read "audio_tokens None", and a field name broke across lines mid-word)."""
    if not isinstance(usage, dict):
        return str(usage)
    return "\n".join(f"{k} {v}" for k, v in _flat(usage))


def _flat(d: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.extend(_flat(v, f"{prefix}{k}."))
        elif v is not None:
            out.append((prefix + str(k), f"{v:,}" if isinstance(v, int) else str(v)))
    return out


def message_detail(
    reader: Reader, trace_id: str, sequence: int, segments: list[Segment] | None = None
) -> MessageDetail:
    segs = segments if segments is not None else reader.segments(trace_id)
    msg = reader.message(trace_id, sequence)
    body, fmt = pretty_body(msg)
    links = _links(reader, msg)
    rows = reader.path_rows(trace_id, [s for _, s in links], segs)
    metadata = reader.trace(trace_id).metadata
    basis = basis_of(metadata)
    undated = undated_of(metadata)
    recorded = undated is None or not undated.covers(sequence)
    raw = json.dumps(_record(msg, recorded), indent=2, ensure_ascii=False, default=str)
    return MessageDetail(
        msg,
        body,
        fmt,
        facts_of(msg, reader.is_on_path(trace_id, sequence, segs), basis, undated),
        tuple(Link(label, s, rows.get(s)) for label, s in links),
        raw,
        zone_note(basis),
    )


def _record(msg: Message, created_recorded: bool) -> dict[str, Any]:
    """The stored record, and whether its ``created_at`` was recorded (``show --json``'s
    and the export's ``created_recorded``): a fill is not to be read as a time."""
    d: dict[str, Any] = {}
    for k, v in asdict(msg).items():
        d[k] = v
        if k == "created_at":
            d["created_recorded"] = created_recorded
    d["tool_calls"] = [c.to_json() for c in msg.tool_calls]
    return d


def _links(reader: Reader, msg: Message) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for call in msg.tool_calls:
        for res in reader.tool_result_for(msg.trace_id, call.id):
            out.append((f"result of {call.name} → #{res.sequence}", res.sequence))
    if msg.role == "tool" and msg.tool_call_id:
        call_seq = _find_call(reader, msg)
        if call_seq is not None:
            out.append((f"called by #{call_seq} ({msg.name or 'tool'})", call_seq))
    return out


def _find_call(reader: Reader, msg: Message, limit: int = 200) -> int | None:
    """The assistant message that made this tool call: walk back the parents."""
    parent = msg.parent_sequence
    for _ in range(limit):
        if parent is None:
            return None
        m = reader.message(msg.trace_id, parent)
        if any(c.id == msg.tool_call_id for c in m.tool_calls):
            return m.sequence
        parent = m.parent_sequence
    return None
