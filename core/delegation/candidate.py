"""The root's current candidate answer, a fixed part of every validator packet (DEL-4).

What the root would answer as things stand: the text of its newest assistant message on
its main path (persisted reasoning removed, tool calls not shown), read from the store
when a child is reviewed, so a validator judges a child's report against where the whole
tree is heading and not only against the child's brief. Empty until the root has said
anything; a side branch or a rewound message never counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.agents import is_main_agent
from core.records import Message

_REASONING_PARTS = frozenset({"reasoning", "thinking", "redacted_thinking"})


@dataclass(frozen=True, slots=True)
class Candidate:
    text: str
    sequence: int | None
    """The root message it is (``None``: no candidate yet)."""


def root_candidate(root_main_path: Iterable[Message]) -> Candidate:
    """The newest assistant text of the root's own agent on its main path."""
    found = Candidate("", None)
    for m in root_main_path:
        if m.role != "assistant" or not is_main_agent(m):
            continue
        text = _text(m)
        if text:
            found = Candidate(text, m.sequence)
    return found


def _text(m: Message) -> str:
    if m.parts:
        return "".join(
            str(p.get("text", ""))
            for p in m.parts
            if isinstance(p, dict) and p.get("type") not in _REASONING_PARTS
        ).strip()
    return m.content.strip()
