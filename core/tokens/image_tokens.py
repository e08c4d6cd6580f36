"""Estimated prompt tokens of an image, by the rule its provider publishes.

The transcript holds an image, not its tokens, so an image's share of a recorded prompt is
an estimate from its pixel size (always shown as estimated). Anthropic: the image is first
resized to fit a 1568 px long edge and about 1.15 megapixels, then costs width × height /
750 tokens. OpenAI (``detail: high``, the default for a large image): fit into 2048 × 2048,
then the short side down to 768 px, then 170 tokens per 512 px tile plus 85.
"""

from __future__ import annotations

import math

ANTHROPIC = "anthropic"
OPENAI = "openai"
#: The rule each provider is estimated by, as a person reads it.
RULES = {
    ANTHROPIC: "Anthropic: fit 1568 px / 1.15 MP, width × height / 750",
    OPENAI: "OpenAI: fit 2048 px, short side 768 px, 85 + 170 per 512 px tile",
}

ANTHROPIC_LONG_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000
ANTHROPIC_PIXELS_PER_TOKEN = 750
OPENAI_FIT = 2048
OPENAI_SHORT_SIDE = 768
OPENAI_TILE = 512
OPENAI_BASE_TOKENS = 85
OPENAI_TILE_TOKENS = 170


def anthropic_image_tokens(width: int, height: int) -> int:
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height, 1))
    scale = min(scale, math.sqrt(ANTHROPIC_MAX_PIXELS / max(width * height, 1)))
    w, h = max(1, round(width * scale)), max(1, round(height * scale))
    return max(1, math.ceil(w * h / ANTHROPIC_PIXELS_PER_TOKEN))


def openai_image_tokens(width: int, height: int) -> int:
    w, h = float(max(width, 1)), float(max(height, 1))
    fit = min(1.0, OPENAI_FIT / max(w, h))
    w, h = w * fit, h * fit
    short = min(1.0, OPENAI_SHORT_SIDE / min(w, h))
    w, h = w * short, h * short
    tiles = math.ceil(w / OPENAI_TILE) * math.ceil(h / OPENAI_TILE)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def image_tokens(provider: str, width: int, height: int) -> int:
    """The estimate of ``provider``'s rule (``ANTHROPIC`` or ``OPENAI``)."""
    if provider == ANTHROPIC:
        return anthropic_image_tokens(width, height)
    return openai_image_tokens(width, height)


def provider_of(model: str | None, source: str | None = None) -> str | None:
    """Whose image rule a call follows, from its model name (else the tool that wrote the
    trace); ``None``: unknown, so no estimate is made."""
    name = (model or "").lower()
    if "claude" in name or name.startswith("anthropic/"):
        return ANTHROPIC
    if name.startswith(("openai/", "azure/")) or any(
        name.split("/")[-1].startswith(p) for p in ("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt")
    ):
        return OPENAI
    if source in ("claude-code", "claude_code"):
        return ANTHROPIC
    if source == "codex":
        return OPENAI
    return None
