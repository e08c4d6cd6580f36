"""Image sizes from file headers and the providers' image-token rules (issue 13, finding 1).

Headers are built byte by byte from each format's specification, so a misread offset fails;
the rule figures are the providers' own published examples."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from core.tokens.image_size import base64_dimensions, image_dimensions
from core.tokens.image_tokens import (
    anthropic_image_tokens,
    openai_image_tokens,
    provider_of,
)


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


def jpeg(width: int, height: int, app_bytes: int = 16) -> bytes:
    """SOI, an APP1 segment of ``app_bytes`` (EXIF pushes the frame header back), SOF0."""
    app = b"\xff\xe1" + struct.pack(">H", app_bytes + 2) + b"\0" * app_bytes
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app + b"\xff\xdb\x00\x04\x00\x00" + sof + b"\xff\xda"


def webp_vp8(width: int, height: int) -> bytes:
    frame = b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return b"RIFF\0\0\0\0WEBPVP8 " + struct.pack("<I", len(frame)) + frame


def webp_vp8l(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    return b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f" + bits.to_bytes(4, "little")


def webp_vp8x(width: int, height: int) -> bytes:
    body = b"\0\0\0\0" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF\0\0\0\0WEBPVP8X" + struct.pack("<I", 10) + body


@pytest.mark.parametrize(
    "head",
    [
        png(2000, 1008),
        b"GIF89a" + struct.pack("<HH", 2000, 1008) + b"\0\0\0",
        jpeg(2000, 1008),
        webp_vp8(2000, 1008),
        webp_vp8l(2000, 1008),
        webp_vp8x(2000, 1008),
    ],
    ids=["png", "gif", "jpeg", "webp-vp8", "webp-vp8l", "webp-vp8x"],
)
def test_dimensions_from_each_header(head: bytes) -> None:
    assert image_dimensions(head) == (2000, 1008)
    url = "data:image/x;base64," + base64.b64encode(head + b"\0" * 5000).decode()
    assert base64_dimensions(url) == (2000, 1008)


def test_a_jpeg_frame_header_past_the_first_head_is_found() -> None:
    data = jpeg(640, 480, app_bytes=60_000) + b"\0" * 100
    assert image_dimensions(data[:3000]) is None  # the first head holds only the APP1
    assert base64_dimensions(base64.b64encode(data).decode()) == (640, 480)


def test_not_an_image_has_no_size() -> None:
    assert image_dimensions(b"hello world, not an image") is None
    assert base64_dimensions("bm90IGFuIGltYWdl") is None
    assert base64_dimensions("%%% not base64") is None


def test_anthropic_rule() -> None:
    # Anthropic's table: 1092x1092 is ~1590 tokens at the size limit; 200x200 is ~54.
    assert anthropic_image_tokens(200, 200) == 54
    assert anthropic_image_tokens(1000, 1000) == 1334
    big = anthropic_image_tokens(2000, 1008)  # resized to 1568 px, then to 1.15 MP
    assert big == anthropic_image_tokens(4000, 2016) == 1534


def test_openai_rule() -> None:
    # OpenAI's examples (detail high): 1024 x 1024 is 765 tokens, 2048 x 4096 is 1105.
    assert openai_image_tokens(1024, 1024) == 765
    assert openai_image_tokens(2048, 4096) == 1105
    assert openai_image_tokens(34, 30) == 255  # one tile, never upscaled


def test_provider_by_model_then_source() -> None:
    assert provider_of("claude-sonnet-4-20250514") == "anthropic"
    assert provider_of("openai/gpt-4o") == "openai"
    assert provider_of("gpt-4.1-mini") == "openai"
    assert provider_of(None, "claude-code") == "anthropic"
    assert provider_of("llama-3-70b", "openhands") is None
