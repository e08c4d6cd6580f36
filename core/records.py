"""Typed, immutable records shared by every part of the runtime.

These are the nouns of ctxlens: what the store keeps, what importers produce, what the
context engine transforms and what the UI shows. They are frozen dataclasses so nobody can
mutate a stored message in place; a changed view of a message is a new object.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, TypeVar, get_args

from core.trace_record import Trace as Trace  # the record lives apart (start-up path)

JSON = Any
Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = get_args(Role)

#: Branch types of side branches (SPEC STORE-2). ``None`` is the main line.
BranchType = Literal["reflection", "knowledge_eval", "compression", "subagent"]
BRANCH_TYPES: tuple[BranchType, ...] = get_args(BranchType)

#: Message kinds: why a message exists. ``message`` is an ordinary conversational turn.
MessageKind = Literal[
    "message",
    "system_prompt",
    "injected_context",  # periodic get_current_context call/result (INJ-2)
    "injected_skill",  # caller-requested skill call/result (INJ-3)
    "task_state",  # restored task state block (INJ-4)
    "nudge",  # runtime nudges (INJ-5)
    "notice",  # background-task completion notices (INJ-5)
    "summary",  # compaction summary (CMP-4)
    "placeholder",  # snip placeholder (CMP-2)
    "identity",  # identity block (CMP-2 layer identity)
    "file_restore",  # file cache restore after compaction (CMP-7)
    "grant",  # granted ref content (REF-3)
    "thinking",  # imported reasoning-only record
    "meta",  # imported metadata-only record (progress, hooks)
]
MESSAGE_KINDS: tuple[MessageKind, ...] = get_args(MessageKind)

_C = TypeVar("_C", bound=type)


def _quick_init(cls: _C) -> _C:
    """Give a frozen, slotted dataclass an ``__init__`` that sets each slot with its own
    bound setter, built once as ``dataclasses`` builds its own: the generated one calls
    ``object.__setattr__`` looked up anew for every field: a ``Message`` cost ~4.6 µs,
    now ~1.4 (``Reader`` builds one per message read, ``Writer.append`` one per message
    written), a ``NewMessage`` 2.6 µs, now ~1.6 (an import builds one per message).
    Same parameters, defaults and object; only for classes without ``__post_init__`` or
    default factories (checked), whose ``__init__`` does nothing else."""
    assert not hasattr(cls, "__post_init__"), "a __post_init__ would be skipped"
    env: dict[str, Any] = {}
    params: list[str] = []
    body: list[str] = []
    for f in fields(cls):
        assert f.default_factory is MISSING, "default factories are not supported"
        env[f"_set_{f.name}"] = getattr(cls, f.name).__set__
        if f.default is MISSING:
            params.append(f.name)
        else:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        body.append(f"    _set_{f.name}(self, {f.name})\n")
    exec(f"def __init__(self, {', '.join(params)}):\n{''.join(body)}", env)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    type.__setattr__(cls, "__init__", init)
    return cls


@_quick_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call requested by an assistant message."""

    id: str
    name: str
    arguments: str = "{}"
    """The JSON-encoded argument object, exactly as the model produced it."""

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> ToolCall:
        if "function" in data:  # OpenAI shape
            fn = data["function"]
            args = fn.get("arguments", "{}")
            return ToolCall(str(data.get("id", "")), str(fn["name"]), _args_text(args))
        return ToolCall(
            str(data.get("id", "")), str(data["name"]), _args_text(data.get("arguments", "{}"))
        )


def canonical_call(name: str, arguments: str) -> str:
    """``<tool> <arguments as canonical JSON>``: one call however its JSON was spaced or
    ordered (duplicate detection, ``Done:`` lines of placeholders, the scripted model)."""
    try:
        canon = json.dumps(
            json.loads(arguments or "{}"),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
    except json.JSONDecodeError:
        canon = " ".join(arguments.split())
    return f"{name} {canon}"


def _args_text(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


@_quick_init
@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message about to be appended; the store assigns sequence, parent and line."""

    role: Role
    content: str = ""
    parts: tuple[JSON, ...] | None = None
    """Multi-part content (images, thinking blocks) exactly as received; ``content`` then
    holds the concatenated text so search and token counts still work."""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    """Tool name on a tool result (helps readers; OpenAI does not require it)."""
    goal_id: str | None = None
    kind: MessageKind = "message"
    branch_type: str | None = None
    """A ``BranchType`` or ``None`` (the main line); still typed ``str`` until the importers'
    lanes carry ``BranchType`` (docs/decisions.md, "Vocabularies as Literal types")."""
    branch_id: str | None = None
    agent_name: str = "main"
    usage: JSON | None = None
    created_at: float | None = None
    metadata: JSON | None = None
    token_count: int | None = None
    """Filled by the store from the token counter when left ``None``."""


@_quick_init
@dataclass(frozen=True, slots=True)
class Message:
    """A stored message. Never changes after it is written (SPEC STORE-2)."""

    trace_id: str
    sequence: int
    parent_sequence: int | None
    role: Role
    content: str
    parts: tuple[JSON, ...] | None
    tool_calls: tuple[ToolCall, ...]
    tool_call_id: str | None
    name: str | None
    goal_id: str | None
    kind: MessageKind
    branch_type: str | None
    """A ``BranchType`` or ``None`` (see ``NewMessage.branch_type``)."""
    branch_id: str | None
    agent_name: str
    token_count: int
    usage: JSON | None
    created_at: float
    metadata: JSON | None
    line: int = 0
    """Storage index: id of the straight run of messages this one belongs to."""
    depth: int = 0
    """Distance from the root along parent_sequence (= row on the main path)."""

    @property
    def message_id(self) -> str:
        """Stable id across stores: ``<trace>:<sequence>``."""
        return f"{self.trace_id}:{self.sequence}"

    def to_openai(self, content: str | None = None) -> dict[str, Any]:
        """This message in OpenAI chat-completions shape (optionally with other content)."""
        out: dict[str, Any] = {"role": self.role}
        if content is not None:
            out["content"] = content
        elif self.parts is not None and self.role == "user" and _has_image(self.parts):
            out["content"] = [_openai_part(p) for p in self.parts if _openai_part(p)]
        else:
            out["content"] = self.content
        if self.tool_calls:
            out["tool_calls"] = [tc.to_openai() for tc in self.tool_calls]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id or ""
        return out


def _has_image(parts: tuple[JSON, ...]) -> bool:
    return any(isinstance(p, dict) and p.get("type") in ("image", "image_url") for p in parts)


def _openai_part(part: JSON) -> dict[str, Any] | None:
    if not isinstance(part, dict):
        return {"type": "text", "text": str(part)}
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": str(part.get("text", ""))}
    if kind == "image_url":
        return dict(part)
    if kind == "image":
        ref = part.get("ref")
        if ref:
            return {"type": "text", "text": f"[image {ref}]"}
        url = part.get("url") or part.get("data_url")
        if url:
            return {"type": "image_url", "image_url": {"url": url}}
    return None


@_quick_init
@dataclass(frozen=True, slots=True)
class ContextItem:
    """One entry of a context: a stored message, possibly shown with other content.

    A context is a list of these. ``content`` overrides the message text (a micro-compaction
    placeholder, a "details cleared" marker); ``synthetic`` items have no stored message
    (``sequence`` is ``None``) and carry their own role and content.
    """

    sequence: int | None
    content: str | None = None
    role: Role | None = None
    kind: str | None = None

    def to_json(self) -> JSON:
        if (
            self.sequence is not None
            and self.content is None
            and self.role is None
            and self.kind is None
        ):
            return self.sequence
        out: dict[str, Any] = {}
        if self.sequence is not None:
            out["seq"] = self.sequence
        if self.content is not None:
            out["content"] = self.content
        if self.role is not None:
            out["role"] = self.role
        if self.kind is not None:
            out["kind"] = self.kind
        return out

    @staticmethod
    def from_json(data: JSON) -> ContextItem:
        if isinstance(data, int):
            return ContextItem(data)
        return ContextItem(data.get("seq"), data.get("content"), data.get("role"), data.get("kind"))


def encode_items(items: Iterable[ContextItem]) -> list[JSON]:
    """A context as stored: runs of plain consecutive sequences become ``{"range": [a, b]}``
    (a 10k-message context is a handful of ranges, not 10k numbers, in every call row)."""
    out: list[JSON] = []
    extend_encoded(out, items)
    return out


def extend_encoded(out: list[JSON], items: Iterable[ContextItem]) -> None:
    """Append ``items`` to the stored context ``out``, continuing its last run (a context
    kept in step as it grows, ``core/run/context_cache.py``). The last run is replaced,
    never changed in place, so a copy of ``out`` already handed to a writer stays as it was."""
    run_start: int | None = None
    prev = 0
    last = out[-1] if out else None
    if type(last) is int:  # a plain item's sequence: a run of one
        run_start = prev = last
        out.pop()
    elif isinstance(last, dict) and "range" in last:
        run_start, prev = out.pop()["range"]
    for item in items:
        plain = item.sequence is not None and item.content is None and item.role is None
        if plain and item.kind is None and run_start is not None and item.sequence == prev + 1:
            prev = item.sequence
            continue
        if run_start is not None:
            out.append(run_start if run_start == prev else {"range": [run_start, prev]})
            run_start = None
        if plain and item.kind is None:
            run_start = prev = item.sequence  # type: ignore[assignment]
        else:
            out.append(item.to_json())
    if run_start is not None:
        out.append(run_start if run_start == prev else {"range": [run_start, prev]})


class ItemsEncoder:
    """``encode_items`` of a context that grows: ``feed`` the items it gains, ``encoded``
    gives the encoding of all fed so far (the calls of an imported agent extend one path, so
    each call's row costs what it added, not its whole context)."""

    __slots__ = ("_out",)

    def __init__(self) -> None:
        self._out: list[JSON] = []

    def feed(self, items: Iterable[ContextItem]) -> None:
        extend_encoded(self._out, items)

    def encoded(self) -> list[JSON]:
        """A new list each time (earlier results stay as they were)."""
        return list(self._out)


def decode_items(data: Sequence[JSON]) -> tuple[ContextItem, ...]:
    """The inverse of ``encode_items`` (plain lists of items decode too)."""
    out: list[ContextItem] = []
    for x in data:
        if isinstance(x, dict) and "range" in x:
            a, b = x["range"]
            out.extend(ContextItem(s) for s in range(int(a), int(b) + 1))
        else:
            out.append(ContextItem.from_json(x))
    return tuple(out)


@_quick_init
@dataclass(frozen=True, slots=True)
class LlmCall:
    """One model call: exactly which context was sent and what came back (SPEC LLM calls)."""

    trace_id: str
    call_index: int
    context: tuple[ContextItem, ...]
    request_sha256: str
    model: str
    head_sequence: int | None
    """The head when the call was made (the last message the context could contain)."""
    response_sequence: int | None = None
    usage: JSON | None = None
    latency_ms: float | None = None
    error: str | None = None
    agent_name: str = "main"
    branch_type: str | None = None
    created_at: float = 0.0
    params: JSON | None = None
    id: int | None = None


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """A compaction boundary: what left the context and what replaced it (SPEC CMP-8)."""

    trace_id: str
    level: str
    """goal | snip | micro | summary | aggressive | identity | imported | naive."""
    at_sequence: int | None
    """The last main-path message when the compaction was applied."""
    removed: tuple[int, ...]
    context_after: tuple[ContextItem, ...]
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    trigger: str = "auto"
    summary_sequence: int | None = None
    goal_id: str | None = None
    details: JSON | None = None
    created_at: float = 0.0
    id: int | None = None

    @classmethod
    def between(
        cls,
        trace_id: str,
        level: str,
        at_sequence: int | None,
        before: Sequence[ContextItem],
        after: Sequence[ContextItem],
        tokens: tuple[int, int],
        *,
        removed: tuple[int, ...] | None = None,
        trigger: str = "auto",
        summary_sequence: int | None = None,
        goal_id: str | None = None,
        details: JSON | None = None,
        created_at: float = 0.0,
    ) -> CompactionEvent:
        """The boundary from the context ``before`` to ``after`` (``tokens``: before and
        after): the message counts follow from them, and the removed sequences too unless
        given (those of ``before`` missing from ``after``)."""
        if removed is None:
            kept = {i.sequence for i in after if i.sequence is not None}
            removed = tuple(
                i.sequence for i in before if i.sequence is not None and i.sequence not in kept
            )
        return cls(
            trace_id=trace_id,
            level=level,
            at_sequence=at_sequence,
            removed=removed,
            context_after=tuple(after),
            tokens_before=tokens[0],
            tokens_after=tokens[1],
            messages_before=len(before),
            messages_after=len(after),
            trigger=trigger,
            summary_sequence=summary_sequence,
            goal_id=goal_id,
            details=details,
            created_at=created_at,
        )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Metadata of an immutable checkpoint blob (SPEC STORE-5)."""

    trace_id: str
    generation: int
    type: str
    object_key: str
    token_count: int
    sha256: str
    size: int
    created_at: float
    id: int | None = None


@dataclass(frozen=True, slots=True)
class ContextRef:
    """Content kept outside the context under a stable id (SPEC REF-1)."""

    id: str
    trace_id: str
    kind: str
    description: str
    tokens: int = 0
    bytes: int = 0
    image_blocks: int = 0
    source_sequence: int | None = None
    content: str | None = None
    created_at: float = 0.0
    metadata: JSON | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    """A ref's content put into the context, charged to the budget (SPEC REF-3)."""

    id: int | None
    trace_id: str
    ref_id: str
    granted_by: str
    reason: str
    cost: JSON
    granted_at_sequence: int | None
    message_sequence: int | None = None
    revoked_at_sequence: int | None = None
    revoked_reason: str | None = None
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class SkillInjection:
    """Record of a skill put into the context (SPEC INJ-3)."""

    trace_id: str
    skill: str
    message_sequence: int
    call_sequence: int | None
    reason: str
    """caller | model | reinject."""
    created_at: float = 0.0
    id: int | None = None


@dataclass(frozen=True, slots=True)
class GoalEvent:
    """One operation of the ``goal`` tool; the GoalTree is derived from these (GOAL-1)."""

    trace_id: str
    sequence: int
    """The message at which the operation happened (walks with rewind)."""
    op: str
    goal_id: str | None
    payload: JSON = field(default=None)
    id: int | None = None
