"""What a tool recorded for a call beside what ctxlens reconstructs from its transcript.

A Claude Code or Codex call's prompt holds more than its transcript shows: the system
prompt, tool definitions, memory files and whatever else the tool sent but did not log. The
recorded prompt tokens minus the tokens of the reconstructed context (its text counted, its
images estimated: ``core/inspector/images.py``) is that part, shown as its own component,
``not in the transcript`` (negative when ctxlens's tokenizer counts the transcript higher
than the provider's did: then nothing is shown for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.fields_json import FieldsJson
from core.importers.usage import OPEN_AT_STOP, normalize_usage

NOT_IN_TRANSCRIPT = "not_in_transcript"
#: What the ``not in the transcript`` part may hold when nothing is known of the context it
#: was measured at: only what the transcript cannot show.
NOT_IN_TRANSCRIPT_TEXT = (
    "not in the transcript (system prompt, tool definitions and other parts the tool did not log)"
)
FRAMING_PER_MESSAGE = 4
"""Tokens a chat format adds around each message (OpenAI's: 3, 4 with a name)."""
FRAMING_PER_REQUEST = 3
"""Tokens a chat format adds once per request (OpenAI's reply priming)."""
FRAMING = "message framing: the tokens the provider adds around each message"


def framing_allowance(items: int) -> int:
    """The most a context of ``items`` messages can owe to chat-format framing alone: a gap
    this small is framing or a tokenizer difference, not a missing prompt."""
    return FRAMING_PER_MESSAGE * items + FRAMING_PER_REQUEST


@dataclass(frozen=True)
class GapContext(FieldsJson):
    """What the context a gap was measured at holds, so the gap's words name only what it
    can hold (``gap_words``)."""

    items: int
    """Messages (context items) of that context."""
    system_in_context: bool
    """It holds a system message: the system prompt is in the transcript, counted."""
    tool_definitions: int | None = None
    """Tool definitions the call was sent, as the tool recorded them (``None``: not
    recorded; 0: recorded, none)."""


@dataclass(frozen=True)
class GapWords(FieldsJson):
    """The ``not in the transcript`` part in words: ``text`` (the label after the number)
    and ``may_hold``, what it can be, most likely first."""

    tokens: int
    text: str
    may_hold: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "text": self.text, "may_hold": list(self.may_hold)}


def gap_words(tokens: int, where: GapContext | None, unknown_images: int = 0) -> GapWords:
    """What ``tokens`` recorded but not in the transcript can be. Unknown context: the system
    prompt, tool definitions and other parts the tool did not log. Known: the system prompt
    only when the context holds no system message, tool definitions unless the tool
    recorded that it sent none, and a gap within ``framing_allowance`` is message framing or
    a tokenizer difference. Images of unknown size are in it too."""
    if where is not None and 0 < tokens <= framing_allowance(where.items):
        held = ["message framing", "tokenizer difference"]
        words = f"{FRAMING}, or a tokenizer difference"
    else:
        held = ["system prompt"] if where is None or not where.system_in_context else []
        n = None if where is None else where.tool_definitions
        if n is None:
            held.append("tool definitions")
        elif n > 0:
            held.append(f"{n} tool definition{'s' if n != 1 else ''}")
        if not held:
            held.append("message framing")
        held.append("other parts the tool did not log")
        words = held[0] if len(held) == 1 else ", ".join(held[:-1]) + " and " + held[-1]
    if unknown_images:
        s = "s" if unknown_images != 1 else ""
        held.append(f"{unknown_images} image{s} of unknown size")
        words += f", and the tokens of {unknown_images} image{s} of unknown size"
    return GapWords(tokens, f"not in the transcript ({words})", tuple(held))


@dataclass(frozen=True)
class Recorded(FieldsJson):
    prompt_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    cache_creation_tokens: int | None = None
    output_open_at_stop: bool = False
    """``output_tokens`` are of a response still being written when the live capture
    stopped (``core/importers/usage.py:OPEN_AT_STOP``): the response's may be more."""

    def unexplained(self, reconstructed: int) -> int | None:
        """Recorded prompt tokens the reconstructed context does not account for."""
        return None if self.prompt_tokens is None else self.prompt_tokens - reconstructed


@dataclass(frozen=True)
class CarriedGap(FieldsJson):
    """The next call's part the transcript lacks, measured at the last main-agent call that
    recorded its prompt: its recorded prompt tokens minus what ctxlens counts in its context
    (text, and the estimate of its images). The system prompt, tool definitions and other
    parts it stands for are sent again with the next call, so the next prompt is the counted
    current context (with its images' estimate) plus ``tokens``."""

    tokens: int
    call_index: int
    recorded_prompt_tokens: int
    reconstructed_tokens: int
    image_tokens_estimated: int = 0
    """The estimate of that call's images, not part of ``tokens`` (they are in the
    transcript; only their tokens are estimated)."""
    items: int | None = None
    """What that call's context held (``GapContext``), so the gap's words fit it: its
    items, whether one is a system message, the tool definitions it recorded."""
    system_in_context: bool | None = None
    tool_definitions: int | None = None

    def where(self) -> GapContext | None:
        """The context the gap was measured at (``None``: not known)."""
        if self.items is None or self.system_in_context is None:
            return None
        return GapContext(self.items, self.system_in_context, self.tool_definitions)


def gap_context(items: int, by_component: dict[str, int], params: Any) -> GapContext:
    """``GapContext`` of a call's context: its items, its token parts (a ``system`` part is
    a system message), the call's ``params.tool_definitions`` (an importer's record of the
    tool definitions sent)."""
    tools = params.get("tool_definitions") if isinstance(params, dict) else None
    return GapContext(
        items,
        by_component.get("system", 0) > 0,
        tools if isinstance(tools, int) and not isinstance(tools, bool) else None,
    )


def recorded_of(usage: Any) -> Recorded | None:
    """The recorded token figures of a call's usage (``None``: nothing recorded)."""
    norm = normalize_usage(usage)
    if norm is None:
        return None
    return Recorded(
        norm.get("prompt_tokens"),
        norm.get("cached_tokens"),
        norm.get("completion_tokens"),
        norm.get("cache_creation_tokens"),
        norm.get(OPEN_AT_STOP) is True,
    )


def with_unexplained(by_component: dict[str, int], unexplained: int | None) -> dict[str, int]:
    """The token parts plus ``not in the transcript`` when the record holds more."""
    if unexplained is None or unexplained <= 0:
        return dict(by_component)
    return {**by_component, NOT_IN_TRANSCRIPT: unexplained}
