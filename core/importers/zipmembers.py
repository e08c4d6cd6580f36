"""Reading one zip member with bounds: stored, deflate and zstd (method 93) members.

Inspect AI writes ``.eval`` logs whose members are compressed with zstd (its current
default); Python's ``zipfile`` before 3.14 refuses that method. Such a member is read
from its raw bytes (the local header gives where they start) and streamed through
``zstandard``, with the same size bound as the others: the decompressed size is counted
as it grows, so a member that claims to be small but expands without end is stopped at
``limit``, never held. The CRC of every zstd member is checked.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, cast

import zstandard

from core.errors import InvalidInputError

ZIP_ZSTANDARD = 93
CHUNK = 1 << 20
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
LOCAL_MAGIC = b"PK\x03\x04"


def member_chunks(
    z: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, limit: int
) -> Iterator[bytes]:
    """The decompressed bytes of ``info`` in chunks; more than ``limit`` bytes is an error."""
    total = 0
    try:
        source = _zstd_chunks(z, info, where) if info.compress_type == ZIP_ZSTANDARD else None
        for chunk in source or _zipfile_chunks(z, info):
            total += len(chunk)
            if total > limit:
                raise InvalidInputError(
                    f"{where}: member larger than declared; refusing (zip bomb?)"
                )
            yield chunk
    except (
        zipfile.BadZipFile,
        zlib.error,
        OSError,
        EOFError,
        ValueError,
        zstandard.ZstdError,
    ) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"{where}: corrupt zip member: {exc}") from None
    except NotImplementedError as exc:  # another compression method (bzip2 is read, lzma too)
        raise InvalidInputError(f"{where}: cannot read zip member: {exc}") from None
    except RuntimeError as exc:  # encrypted member
        raise InvalidInputError(f"{where}: cannot read zip member: {exc}") from None


def _zipfile_chunks(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    with z.open(info) as f:
        while chunk := f.read(CHUNK):
            yield chunk


def _zstd_chunks(z: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> Iterator[bytes]:
    if info.flag_bits & 0x1:
        raise InvalidInputError(f"{where}: encrypted zip member; cannot read it")
    fp = z.fp
    if fp is None:
        raise InvalidInputError(f"{where}: the zip file is closed")
    fp.seek(info.header_offset)
    head = fp.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != LOCAL_MAGIC:
        raise InvalidInputError(f"{where}: bad local header of a zip member")
    fields = _LOCAL_HEADER.unpack(head)
    fp.seek(fields[-2] + fields[-1], 1)  # file name and extra field
    raw = _Slice(fp, info.compress_size)
    crc = 0
    source = cast("IO[bytes]", raw)  # read() is all the reader calls
    with zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True) as reader:
        while chunk := reader.read(CHUNK):
            crc = zlib.crc32(chunk, crc)
            yield chunk
    if crc != info.CRC:
        raise InvalidInputError(f"{where}: CRC check failed for a zstd zip member")


class _Slice:
    """The next ``size`` bytes of a file, as a readable object (the raw zstd data)."""

    def __init__(self, fp: IO[bytes], size: int) -> None:
        self._fp = fp
        self._left = size

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        n = self._left if n < 0 else min(n, self._left)
        data = self._fp.read(n)
        self._left -= len(data)
        return data
