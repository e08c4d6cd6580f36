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
from core.importers.usage import normalize_usage

NOT_IN_TRANSCRIPT = "not_in_transcript"
#: What the ``not in the transcript`` part may hold: only what the transcript cannot show.
NOT_IN_TRANSCRIPT_TEXT = (
    "not in the transcript (system prompt, tool definitions and other parts the tool did not log)"
)


@dataclass(frozen=True)
class Recorded(FieldsJson):
    prompt_tokens: int | None
    cached_tokens: int | None
    output_tokens: int | None
    cache_creation_tokens: int | None = None

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
    )


def with_unexplained(by_component: dict[str, int], unexplained: int | None) -> dict[str, int]:
    """The token parts plus ``not in the transcript`` when the record holds more."""
    if unexplained is None or unexplained <= 0:
        return dict(by_component)
    return {**by_component, NOT_IN_TRANSCRIPT: unexplained}
