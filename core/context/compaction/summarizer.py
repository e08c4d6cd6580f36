"""The summarizer interface of the LLM summary (SPEC CMP-4) and its offline implementation.

A summarizer turns a ``SummaryRequest`` into text. The compactor calls it once per stage of
the side-branch queue (``reflection``, ``knowledge_eval``, ``compression``); only the
``compression`` answer becomes the summary's narrative, and only after the contract checks
(``core/context/compaction/summary.py``). An LLM-backed summarizer sends
``request.prompt_messages()`` to its model and returns the reply text; it may raise any
exception, which counts as a failed compaction and never reaches the context.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from core.context.summary_request import STAGE_INSTRUCTIONS, Summarizer, SummaryRequest

__all__ = ["STAGE_INSTRUCTIONS", "ScriptedSummarizer", "Summarizer", "SummaryRequest"]


class ScriptedSummarizer:
    """Deterministic offline summarizer: it reads only the messages it is given.

    The narrative names what the user asked, which tools ran how often, and the last thing
    the assistant said, so a summary built from it never knows more than the context held.
    """

    def __init__(self, max_chars: int = 1200) -> None:
        self.max_chars = max_chars
        self.calls: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.calls.append(request)
        msgs = request.messages
        if request.stage != "compression":
            return _notes(msgs)[: self.max_chars]
        return _narrative(msgs)[: self.max_chars]


def _narrative(msgs: Sequence[Mapping[str, Any]]) -> str:
    tools = Counter(
        c.get("function", {}).get("name", "?") for m in msgs for c in m.get("tool_calls") or ()
    )
    users = _last_texts(msgs, "user", 1)
    said = _last_texts(msgs, "assistant", 1)
    lines = [f"Covered {len(msgs)} messages."]
    if users:
        lines.append(f'The user last wrote: "{_short(users[-1])}"')
    if tools:
        used = ", ".join(f"{name} x{n}" for name, n in sorted(tools.items()))
        lines.append(f"Tools used: {used}.")
    if said:
        lines.append(f'The assistant last said: "{_short(said[-1])}"')
    return "\n".join(lines)


def _notes(msgs: Sequence[Mapping[str, Any]]) -> str:
    said = [_short(t) for t in _last_texts(msgs, "assistant", 5)]
    return "\n".join(f"- {s}" for s in said) or "- nothing durable"


def _last_texts(msgs: Sequence[Mapping[str, Any]], role: str, n: int) -> list[str]:
    """The last ``n`` non-empty texts of ``role``, oldest first (read from the end)."""
    out: list[str] = []
    for m in reversed(msgs):
        if m.get("role") == role:
            text = _text(m)
            if text:
                out.append(text)
                if len(out) == n:
                    break
    out.reverse()
    return out


def _text(m: Mapping[str, Any]) -> str:
    content = m.get("content")
    if isinstance(content, str):
        return content.strip()
    return json.dumps(content, ensure_ascii=False) if content else ""


def _short(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
