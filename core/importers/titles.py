"""A trace's title from its first real user request: what the user asked, not the context
a tool wrapped around it (Codex's "# Context from my IDE setup:", ``<environment_context>``,
``<ide_selection>`` and similar blocks, AGENTS.md instructions)."""

from __future__ import annotations

import re

MAX_TITLE = 100
#: Codex IDE extension: the request follows this heading, after the open tabs.
REQUEST_MARKERS = ("## My request for Codex:",)
#: A leading ``<tag …>…</tag>`` block (context a tool attached to the request).
_BLOCK = re.compile(r"\A\s*<([A-Za-z][\w-]*)\b[^>]*>.*?</\1>\s*", re.DOTALL)
#: Texts that are instructions or context in their entirety, never a request.
CONTEXT_PREFIXES = ("# AGENTS.md instructions", "# Context from my IDE setup:", "<INSTRUCTIONS>")


def request_title(text: str) -> str:
    """The request in ``text`` on one line (cut to ``MAX_TITLE``), or ``""`` if it holds none."""
    for marker in REQUEST_MARKERS:
        if marker in text:
            text = text.rsplit(marker, 1)[1]
    while (m := _BLOCK.match(text)) is not None:
        text = text[m.end() :]
    text = text.strip()
    if text.startswith(CONTEXT_PREFIXES) or text.startswith("<"):
        return ""
    line = " ".join(text.split())
    return line if len(line) <= MAX_TITLE else line[: MAX_TITLE - 1] + "…"
