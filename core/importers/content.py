"""Small conversions every importer needs: text of content blocks, images as refs, times.

Sources spell the same things differently (``text``/``input_text``/``output_text``,
base64 image blocks, data URLs, ISO or epoch times); these helpers give importers one
answer each, so the store sees one shape. Times are read by
``core/importers/times.py:parse_time`` (importers take it from here).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from core.importers.base import TraceBuilder
from core.importers.times import parse_time as parse_time
from core.json_text import loads_or
from core.records import Role
from core.store.writer import orjson_text

ROLES: dict[str, Role] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}

TEXT_TYPES = frozenset({"text", "input_text", "output_text", "summary_text", "reasoning_text"})
SECRET_KEYS = frozenset({"api_key", "apikey", "api-key", "authorization", "x-api-key"})


def role_of(value: Any, default: Role = "user") -> Role:
    """A stored role from a source's role name (unknown names fall back to ``default``)."""
    return ROLES.get(str(value), default)


def dumps(value: Any) -> str:
    """Compact JSON text, unicode kept (tool arguments, structured outputs): orjson's where
    it reads back as the same value (``core/store/writer.py:orjson_text``), else ``json``'s.
    Numbers in exponent form are written without ``+`` (``1e16``), which JSON reads the
    same."""
    if isinstance(value, str):
        return value
    text = orjson_text(value)
    if text is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text


def text_of(value: Any) -> str:
    """The readable text of a content value: a string, a block, or a list of blocks."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [text_of_block(b) for b in value]
        return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        return text_of_block(value)
    return str(value)


def text_of_block(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return "" if block is None else str(block)
    kind = block.get("type")
    if kind in TEXT_TYPES or (kind is None and "text" in block):
        value = block.get("text")
        if value is None:
            value = block.get("content")
        return value if isinstance(value, str) else text_of(value)
    if kind is None and isinstance(block.get("content"), str | list):
        return text_of(block["content"])
    return ""


def image_ref(
    b: TraceBuilder,
    data: str,
    media_type: str = "",
    where: str = "",
    source_sequence: int | None = None,
) -> dict[str, Any]:
    """Store an image (base64 data or URL) as a ref; returns the message part for it."""
    if data.startswith("data:"):
        header, _, payload = data.partition(",")
        media_type = media_type or header[5:].split(";")[0]
        url = data
    elif data.startswith(("http://", "https://", "file:", "tc://", "attachment://")):
        payload, url = "", data
    else:
        payload = data
        url = f"data:{media_type or 'image/png'};base64,{data}"
    nbytes = 0
    if payload:
        try:
            nbytes = len(base64.b64decode(payload, validate=False))
        except (binascii.Error, ValueError):
            nbytes = len(payload)
    desc = f"image {media_type or 'unknown type'}, {nbytes // 1024} KB" + (
        f" ({where})" if where else ""
    )
    ref_id = b.ref(
        "image", desc, url, nbytes=nbytes, image_blocks=1, source_sequence=source_sequence
    )
    part: dict[str, Any] = {"type": "image", "ref": ref_id}
    if media_type:
        part["media_type"] = media_type
    return part


def content_with_images(
    b: TraceBuilder,
    value: Any,
    where: str,
    image_sources: Callable[[dict[str, Any]], list[str] | None],
) -> tuple[str, tuple[Any, ...] | None]:
    """A content value's text and, when it holds an image, its blocks with every image
    stored as a ref (``image_ref``); without images the text alone is enough (``None``).
    ``image_sources(block)``: the data or URLs of an image block, ``None`` for any other
    block (kept as it is). The formats differ only in where a block keeps its image."""
    if not isinstance(value, list):
        return text_of(value), None
    parts: list[Any] = []
    images = False
    for block in value:
        sources = image_sources(as_dict(block))
        if sources is None:
            parts.append(block)
            continue
        for src in sources:
            parts.append(image_ref(b, src, "", where, b.next_sequence))
            images = True
    return text_of(value), tuple(parts) if images else None


def scrub(value: Any) -> Any:
    """A copy with secret-looking fields masked (keys never enter the store, LLM-1)."""
    if isinstance(value, dict):
        return {
            k: ("***" if str(k).lower() in SECRET_KEYS and v else scrub(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def json_or_text(value: Any) -> Any:
    """Decode a JSON-encoded string value (OTel attributes carry JSON as strings)."""
    if isinstance(value, str):
        s = value.strip()
        if s[:1] in ("{", "[", '"'):
            return loads_or(s, value)
    return value
