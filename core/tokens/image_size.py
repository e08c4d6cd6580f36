"""An image's pixel size from the first bytes of its file (PNG, JPEG, GIF, WebP).

The token estimate of an image needs only its width and height, and every format ctxlens
meets puts them in its header: reading them costs a few bytes of a base64 text that may be
megabytes long, and needs no image library (the run time is stdlib only). A JPEG keeps its
size in the frame header after any metadata segments, so a JPEG's head is read in growing
pieces until the frame header is in it.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable

#: Base64 characters decoded first, then for a JPEG whose frame header lies further on.
HEAD_CHARS = (4096, 65_536, 1 << 20)
#: Characters allowed for a ``data:`` URL's header before its base64 data.
DATA_URL_PREFIX = 128
#: JPEG markers of a start of frame (C4, C8 and CC are other segments).
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def image_dimensions(head: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from an image file's first bytes (``None``: not a format read
    here, or the head is too short)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR" and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return w, h
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return w, h
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp(head)
    if head[:2] == b"\xff\xd8":
        return _jpeg(head)
    return None


def _webp(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30 and head[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", head[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25 and head[20] == 0x2F:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:
        return int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1
    return None


def _jpeg(head: bytes) -> tuple[int, int] | None:
    """Walk the segments to the first start-of-frame marker (height, then width)."""
    i = 2
    while i + 9 <= len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        length = struct.unpack(">H", head[i + 2 : i + 4])[0]
        if marker in _SOF:
            h, w = struct.unpack(">HH", head[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None


def base64_dimensions(text: str) -> tuple[int, int] | None:
    """``image_dimensions`` of base64 data or a ``data:`` URL, decoding only its head."""
    return read_dimensions(lambda chars: text[:chars])


def read_dimensions(read: Callable[[int], str | None]) -> tuple[int, int] | None:
    """``base64_dimensions`` of a text read by ``read(chars)`` (its first ``chars``
    characters: a stored ref's head), asking for more only while a JPEG's frame header is
    not in what was read."""
    for chars in HEAD_CHARS:
        text = read(chars + DATA_URL_PREFIX)
        if not text:
            return None
        piece = text.partition(",")[2] if text.startswith("data:") else text
        piece = piece[: len(piece) - len(piece) % 4]
        try:
            head = base64.b64decode(piece, validate=False)
        except (binascii.Error, ValueError):
            return None
        found = image_dimensions(head)
        if found is not None or len(text) < chars + DATA_URL_PREFIX or head[:2] != b"\xff\xd8":
            return found
    return None
