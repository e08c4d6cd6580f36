"""The images a context carries and their estimated tokens (issue 13, finding 1).

ctxlens counts a message's text exactly, but an image block has no text: its tokens are the
provider's, from its pixel size. Without them, the gap between a call's recorded prompt and
the counted transcript would silently hold the images and be called "system prompt, tool
definitions". This gives the images their own part, marked as an estimate, and says which
images could not be sized (unknown, never 0).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from core.fields_json import FieldsJson
from core.inspector.recorded import gap_words
from core.records import Message
from core.store.reader import Reader
from core.tokens.image_size import base64_dimensions, read_dimensions
from core.tokens.image_tokens import RULES, image_tokens

IMAGES_ESTIMATED = "images_estimated"
"""The token part of the images (an estimate), beside the counted ``COMPONENTS``."""


@dataclass(frozen=True)
class ImageEstimate(FieldsJson):
    images: int
    """Image blocks in the context."""
    estimated_tokens: int
    """Sum of the estimates of the images whose size and provider rule are known."""
    unknown: int
    """Images without an estimate (size unreadable, or whose provider rule is unknown)."""
    rule: str | None
    """The provider rule used (``None``: no rule is known for this call's model)."""

    @property
    def text(self) -> str:
        """The images as a person reads them: how many, their estimate, what is unknown."""
        n = f"{self.images} image{'s' if self.images != 1 else ''}"
        if self.rule is None:
            return f"{n}: tokens unknown (no image rule for this model)"
        if self.unknown == self.images:
            return f"{n}: tokens unknown (size unknown)"
        out = f"{n} ≈ {self.estimated_tokens:,} tokens (estimated, {self.rule})"
        return out + (f"; {self.unknown} of unknown size" if self.unknown else "")

    @property
    def known_tokens(self) -> int | None:
        """``estimated_tokens`` when at least one image has an estimate, else ``None``
        (unknown, not 0)."""
        return None if self.unknown == self.images else self.estimated_tokens


def gap_text(images: ImageEstimate | None) -> str:
    """The label of the ``not in the transcript`` part when nothing is known of the context
    it was measured at (``core/inspector/recorded.py:gap_words`` names what a known one can
    lack), and the images whose tokens could not be estimated (they are in it too)."""
    return gap_words(0, None, images.unknown if images is not None else 0).text


def image_parts(msg: Message) -> list[dict[str, object]]:
    """The image parts of a stored message (none for a message without parts)."""
    return [
        p
        for p in msg.parts or ()
        if isinstance(p, dict) and p.get("type") in ("image", "image_url")
    ]


def image_estimate(
    reader: Reader, trace_id: str, messages: Iterable[Message], provider: str | None
) -> ImageEstimate | None:
    """The images of ``messages`` (the ones the context shows as they are stored) and their
    estimate by ``provider``'s rule; ``None`` when they hold no image."""
    images = unknown = tokens = 0
    for msg in messages:
        for part in image_parts(msg):
            images += 1
            size = _size_of(reader, trace_id, part)
            if size is None or provider is None:
                unknown += 1
            else:
                tokens += image_tokens(provider, *size)
    if not images:
        return None
    return ImageEstimate(images, tokens, unknown, RULES.get(provider) if provider else None)


def _size_of(reader: Reader, trace_id: str, part: dict[str, object]) -> tuple[int, int] | None:
    width, height = part.get("width"), part.get("height")
    if isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0:
        return width, height
    ref = part.get("ref")
    if isinstance(ref, str):
        return read_dimensions(lambda chars: reader.ref_head(trace_id, ref, chars))
    url = part.get("image_url") or part.get("url")
    if isinstance(url, dict):
        url = url.get("url")
    return base64_dimensions(url) if isinstance(url, str) and url.startswith("data:") else None
