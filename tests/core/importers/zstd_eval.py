"""Writing ``.eval`` files as current Inspect AI releases do: zip members compressed with
zstd (method 93), through ``zipfile`` itself (as Inspect does with ``ZIP_ZSTANDARD`` on
Python 3.14, or with the ``zipfile-zstd`` patch before), so the layout (local headers, data
descriptors, central directory) is the one ``zipfile`` writes."""

from __future__ import annotations

import contextlib
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import zstandard

ZIP_ZSTANDARD = 93


@contextlib.contextmanager
def zstd_writing() -> Iterator[None]:
    """``zipfile`` able to write method 93 (zstd) for the duration."""
    get, check = zipfile._get_compressor, zipfile._check_compression  # type: ignore[attr-defined]

    def compressor(kind: int, level: int | None = None) -> Any:
        if kind == ZIP_ZSTANDARD:
            return zstandard.ZstdCompressor(level=3).compressobj()
        return get(kind, level)

    def checked(kind: int) -> None:
        if kind != ZIP_ZSTANDARD:
            check(kind)

    zipfile._get_compressor = compressor  # type: ignore[attr-defined]
    zipfile._check_compression = checked  # type: ignore[attr-defined]
    try:
        yield
    finally:
        zipfile._get_compressor = get  # type: ignore[attr-defined]
        zipfile._check_compression = check  # type: ignore[attr-defined]


def write_eval(path: Path, members: Iterable[tuple[str, bytes]]) -> Path:
    """A zip whose every member is zstd-compressed (streamed writes, as Inspect's)."""
    with zstd_writing(), zipfile.ZipFile(path, "w", ZIP_ZSTANDARD) as z:
        for name, data in members:
            with z.open(name, "w") as f:
                f.write(data)
    return path


def recompress(source: Path, target: Path) -> Path:
    """``source`` (any .eval) with its members rewritten as zstd."""
    with zipfile.ZipFile(source) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    return write_eval(target, members)
