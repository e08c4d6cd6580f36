"""Timeline rows: the few fields a timeline row shows, built from a stored message.

A row keeps a short preview instead of the whole content, so a page cache of thousands of
rows stays small however long the messages are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.records import Message
from core.store.preview_record import MessagePreview

PREVIEW_CHARS = 160
READ_CHARS = 2 * PREVIEW_CHARS
"""Characters of a message's content a row is made from (``squash`` looks no further)."""
Shown = Message | MessagePreview
NOT_SENT = frozenset({"meta", "thinking"})
"""``core/context/view.py:NOT_SENT`` (that module loads the store's reader, SQLAlchemy, which
the first page does without; a test keeps the two equal)."""
"""A whole message, or just the fields a row shows (``Reader.main_path_previews``)."""

#: Badge ids in display order, with the label a row shows for each.
BADGES: dict[str, str] = {
    "error": "error",
    "injected_context": "context",
    "injected_skill": "skill",
    "summary": "summary",
    "nudge": "nudge",
    "compaction_call": "compaction call",
    "side_branch": "side branch",
    "subagent": "subagent",
    "placeholder": "placeholder",
    "grant": "granted ref",
    "abandoned": "abandoned branch forks here",
}
"""``abandoned`` marks the message an abandoned continuation forks from (the row itself is on
the path: "abandoned branch" read as if it were not; review h13c)."""

_KIND_BADGE = {
    "injected_context": "injected_context",
    "task_state": "injected_context",
    "injected_skill": "injected_skill",
    "summary": "summary",
    "nudge": "nudge",
    "notice": "nudge",
    "placeholder": "placeholder",
    "grant": "grant",
}


@dataclass(frozen=True, slots=True)
class TimelineRow:
    """One message as the timeline shows it."""

    sequence: int
    role: str
    kind: str
    goal_id: str | None
    tokens: int
    preview: str
    badges: tuple[str, ...]
    tool_names: tuple[str, ...]
    tool_call_id: str | None
    branch_type: str | None
    agent_name: str
    sendable: bool
    """False for records never sent to a model (``meta``, ``thinking``)."""


def badges_of(msg: Shown, forks: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Badges from the message's kind and branch fields, plus the branches forking off it.

    ``forks`` names the lines starting at this message: branch types of side branches, or
    ``"abandoned"`` for the old continuation left behind by a rewind. A ``compression``
    branch is a compaction's own model call (the summarizer), badged as that.
    """
    found: set[str] = set()
    if msg.role == "tool" and _is_error(msg):
        found.add("error")
    if msg.kind in _KIND_BADGE:
        found.add(_KIND_BADGE[msg.kind])
    if msg.branch_type == "compression":  # the model call that wrote a compaction's summary
        found.add("compaction_call")
    elif msg.branch_type == "subagent":  # not the agent's name: an import keeps the
        found.add("subagent")  # tool's (any-agent's main agent is ``any_agent``)
    elif msg.branch_type is not None:
        found.add("side_branch")
    for f in forks:
        if f == "abandoned":
            found.add("abandoned")
        elif f == "subagent":
            found.add("subagent")
        elif f == "compression":
            found.add("compaction_call")
        else:
            found.add("side_branch")
    return tuple(b for b in BADGES if b in found)


def _is_error(msg: Shown) -> bool:
    if isinstance(msg, MessagePreview):
        return bool(msg.is_error)
    return isinstance(msg.metadata, dict) and bool(msg.metadata.get("is_error"))


def preview_of(msg: Shown) -> str:
    """One line: tool calls as ``name(args…)`` then the text, cut to ``PREVIEW_CHARS``."""
    parts = [f"{c.name}({squash(c.arguments, 60)})" for c in msg.tool_calls]
    if msg.content:
        parts.append(squash(msg.content, PREVIEW_CHARS))
    return squash(" ".join(parts), PREVIEW_CHARS)


def squash(text: str, limit: int = PREVIEW_CHARS) -> str:
    """One line of at most ``limit`` characters (whitespace runs become one space). Terminal
    escapes a tool's output carried (``ESC[1m`` colours of a hook's log) are dropped: in a
    row they were an unprintable box and a stray ``[1m``; the message keeps them."""
    head = text[: limit * 2]
    if "\x1b" in head:
        head = _ESCAPES.sub("", text[: limit * 4])
    flat = " ".join(head.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_ESCAPES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]+[0-~]|[@-Z\\-_])"
)
"""ANSI/VT escape sequences: CSI (colours, cursor), OSC (titles, links), charset
designations (``ESC ( B``) and two-byte ones."""


def row_of(msg: Shown, forks: tuple[str, ...] = ()) -> TimelineRow:
    names = tuple(c.name for c in msg.tool_calls)
    if msg.role == "tool" and msg.name:
        names = (msg.name,)
    return TimelineRow(
        sequence=msg.sequence,
        role=msg.role,
        kind=msg.kind,
        goal_id=msg.goal_id,
        tokens=msg.token_count,
        preview=preview_of(msg),
        badges=badges_of(msg, forks),
        tool_names=names,
        tool_call_id=msg.tool_call_id,
        branch_type=msg.branch_type,
        agent_name=msg.agent_name,
        sendable=msg.kind not in NOT_SENT,
    )
