"""Reading what was appended to a file since the last look, by byte offset.

Only complete lines are returned: a partial last line (an agent halfway through writing a
record, even in the middle of a UTF-8 character) stays on disk, unread, until its newline
arrives. A file's identity (inode, hash of its first bytes) tells a file that grew from one
that was truncated, replaced or rotated under the same name.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

#: Bytes hashed to recognise a file (its first records: session id, start time).
HEAD_BYTES = 4096
#: Most bytes read in one look (a long backlog is taken in several batches).
MAX_READ = 8 << 20


@dataclass(frozen=True)
class Identity:
    inode: int
    head_sha256: str


def identity(path: Path, upto: int) -> Identity | None:
    """The file's inode and the hash of its first ``min(upto, HEAD_BYTES)`` bytes."""
    try:
        with path.open("rb") as f:
            head = f.read(min(upto, HEAD_BYTES))
            inode = os.fstat(f.fileno()).st_ino
    except OSError:
        return None
    return Identity(inode, hashlib.sha256(head).hexdigest())


@dataclass(frozen=True)
class Lines:
    """Complete lines read from ``start``; ``end`` is the offset after the last newline."""

    start: int
    end: int
    first_lineno: int
    lines: tuple[bytes, ...]


def read_lines(path: Path, offset: int, lineno: int, limit: int = MAX_READ) -> Lines | None:
    """The complete lines after ``offset`` (``lineno`` lines were before it), or ``None``."""
    try:
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read(limit)
    except OSError:
        return None
    cut = data.rfind(b"\n")
    if cut < 0:
        if len(data) >= limit:  # one line longer than a read: take it whole
            return read_lines(path, offset, lineno, limit * 4)
        return None
    body = data[: cut + 1]
    return Lines(offset, offset + len(body), lineno + 1, tuple(body.splitlines(keepends=True)))


def size_of(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None
