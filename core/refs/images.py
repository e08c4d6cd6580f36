"""Images in the context (SPEC TOK-3, REF-3; seed C "图片和多模态要单独预算").

Images are budgeted as image blocks, not text tokens, and counted exactly as the provider
receives them (the rendered OpenAI messages). Tools hand images out as refs; the context
keeps only the newest ones, and an old image is replaced by its reference text — the ref
stays, so ``read_ref`` can load it again.

Replacing changes the context's prefix (provider caches miss), so ``replace_old_images``
acts only when the context holds more image blocks than allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.context.view import View, render_item
from core.records import ContextItem, Message


def rendered_image_blocks(message: Mapping[str, Any]) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url")


def image_blocks_in(view: View) -> int:
    """Image blocks the request for ``view`` carries."""
    return sum(rendered_image_blocks(render_item(i, view.messages)) for i in view.items)


def image_reference_text(ref_id: str | None, description: str = "") -> str:
    what = f" {description}" if description else ""
    if ref_id is None:
        return f"[image{what} — removed from the context]"
    return f'[image {ref_id}:{what} — not loaded; read_ref(ref="{ref_id}") to view it]'


def replacement_text(msg: Message) -> str:
    """The message's text with every image part replaced by its reference text."""
    meta = msg.metadata if isinstance(msg.metadata, dict) else {}
    out: list[str] = []
    for part in msg.parts or ():
        if not isinstance(part, dict):
            out.append(str(part))
        elif part.get("type") == "text":
            out.append(str(part.get("text", "")))
        elif part.get("type") in ("image", "image_url"):
            ref = part.get("ref") or meta.get("ref")
            out.append(image_reference_text(ref, str(part.get("description") or "")))
    return "\n".join(t for t in out if t)


@dataclass(frozen=True, slots=True)
class ImageReplacement:
    """The new context items, and which messages lost their images."""

    items: tuple[ContextItem, ...]
    replaced: tuple[int, ...]
    """Sequences whose images became reference text, oldest first."""

    @property
    def changed(self) -> bool:
        return bool(self.replaced)


def replace_old_images(view: View, keep: int) -> ImageReplacement:
    """Keep the newest ``keep`` image blocks; older image messages become reference text.

    Counts blocks, not messages: a message with three images uses three. A message is kept
    whole or replaced whole (a partial image message would be confusing).
    """
    blocks = [rendered_image_blocks(render_item(i, view.messages)) for i in view.items]
    if sum(blocks) <= keep:
        return ImageReplacement(tuple(view.items), ())
    items = list(view.items)
    budget, replaced = keep, []
    for index in range(len(items) - 1, -1, -1):
        n = blocks[index]
        if not n:
            continue
        if n <= budget:
            budget -= n
            continue
        budget = 0
        item = items[index]
        assert item.sequence is not None  # only stored messages render image parts
        items[index] = ContextItem(
            item.sequence, replacement_text(view.messages[item.sequence]), item.role, item.kind
        )
        replaced.append(item.sequence)
    return ImageReplacement(tuple(items), tuple(sorted(replaced)))
