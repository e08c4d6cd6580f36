"""Reading input files as streams: JSON Lines record by record, with clear errors.

Memory stays constant in the file size: one line is in memory at a time, and a line longer
than ``MAX_LINE`` is an error rather than an allocation. Every error names the file and
the line, and says what is wrong in words a user can act on.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from core.errors import InvalidInputError
from core.importers.jsonstream import TOO_DEEP, BeyondLimits
from core.importers.walk import open_file

if TYPE_CHECKING:  # only annotations: ``base`` imports this module through ``calls``
    from core.importers.base import ImportContext

#: Read buffer: few large reads rather than one per 8 KB (each read lets go of the GIL,
#: and a token-counting thread that takes it over delays the importing thread).
READ_BUFFER = 1 << 20
#: Longest accepted JSONL line (a Claude Code record with pasted images is a few MB).
MAX_LINE = 64 << 20


class CountingReader(io.RawIOBase):
    """A binary file wrapper that reports bytes read to the import context (``advance``),
    or with ``progress=False`` only lets a cancel through (``check``: a file read a first
    time for something else, whose bytes the import counts when it reads them again)."""

    def __init__(self, f: IO[bytes], ctx: ImportContext, progress: bool = True) -> None:
        super().__init__()
        self._f = f
        self._each = ctx.advance if progress else lambda _n: ctx.check()

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._f.read(len(b))
        n = len(data)
        b[:n] = data
        self._each(n)
        return n


def loads(line: bytes) -> Any:
    """``json.loads`` of one line, through orjson (twice as fast) where it gives the same.

    orjson refuses what ``json`` reads in its own way (NaN, 1e400, escaped lone surrogates,
    UTF-16 text, invalid UTF-8); those lines go to ``json``, which also words the errors.
    orjson reads integers beyond 64 bits as floats: a line holding 19 or more digits in a
    row goes to ``json`` without trying.
    """
    value = _fast_loads(line)
    return json.loads(line) if value is _NEEDS_JSON else value


def _fast_loads(line: bytes) -> Any:
    """orjson's value of ``line``, or ``_NEEDS_JSON`` where only ``json`` gives the same."""
    if _LONG_DIGITS not in line.translate(_DIGITS):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return _NEEDS_JSON


_NEEDS_JSON = object()


#: Digits to ``0``, all else to a space: ``_LONG_DIGITS in line.translate(_DIGITS)`` finds
#: a run of 19 digits anywhere in ``line`` in one pass.
_DIGITS = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_LONG_DIGITS = b"0" * 19


def describe_json_error(exc: ValueError, line: bytes | None = None) -> str:
    """The error in words; ``line``: the bytes read, whose first byte that is not UTF-8 is
    named (``json`` takes a line that starts like a UTF-16 byte order mark for UTF-16, and
    its error named the line's last byte: "byte 0x0a" for a line starting ``\xff\xfe``)."""
    if isinstance(exc, UnicodeDecodeError):
        if line is not None:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as bad:
                return f"not UTF-8 text (byte 0x{line[bad.start]:02x} at column {bad.start + 1})"
        return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x})"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    return f"invalid JSON: {exc}"


def iter_jsonl(
    path: Path, ctx: ImportContext, where: str | None = None
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of a JSON Lines file."""
    return _values(path, ctx, where or str(path), objects=False)


def iter_records(
    path: Path, ctx: ImportContext, where: str | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Like ``iter_jsonl`` but every line must hold a JSON object."""
    return _values(path, ctx, where or str(path), objects=True)


def _values(path: Path, ctx: ImportContext, name: str, objects: bool) -> Iterator[Any]:
    """The loop of ``iter_jsonl`` and ``iter_records``, in one generator with orjson's
    path inline: an import reads every line through it, and each layer of generator
    or call per line cost the Claude Code import ~1 ms of its ~50 (bench session)."""
    with open_file(path, name, READ_BUFFER) as f:
        readline, advance = f.readline, ctx.advance
        lineno = 0
        while True:
            line = readline(MAX_LINE + 1)
            if not line:
                return
            lineno += 1
            advance(len(line))
            if len(line) > MAX_LINE:
                raise InvalidInputError(
                    f"{name}:{lineno}: line longer than {MAX_LINE >> 20} MB; not a trace record"
                )
            if line.isspace():  # blank (``strip`` would copy every line to see it)
                continue
            value = _fast_loads(line)
            if value is _NEEDS_JSON:
                value = _json_loads(line, ctx, name, lineno)
            if objects and not isinstance(value, dict):
                as_record(value, name, lineno)  # raises, naming the line
            yield lineno, value


def parse_line(line: bytes, ctx: ImportContext, name: str, lineno: int) -> Any:
    """The JSON value of one line, or an error naming the file and the line."""
    value = _fast_loads(line)
    return _json_loads(line, ctx, name, lineno) if value is _NEEDS_JSON else value


def _json_loads(line: bytes, ctx: ImportContext, name: str, lineno: int) -> Any:
    """A line orjson could not read as ``json`` does: ``json``'s value, or its error
    naming the file and the line."""
    ctx.finite_json = False  # json reads NaN and infinities; orjson never
    try:
        return json.loads(line)
    except ValueError as exc:
        hint = "" if line.endswith(b"\n") else " (last line is incomplete: file truncated?)"
        words = describe_json_error(exc, line)
        raise InvalidInputError(f"{name}:{lineno}: {words}{hint}") from None
    except RecursionError:
        raise BeyondLimits(f"{name}:{lineno}: {TOO_DEEP}") from None


def as_record(value: Any, name: str, lineno: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInputError(
            f"{name}:{lineno}: expected a JSON object, found {type(value).__name__}"
        )
    return value


def first_record(path: Path, limit: int = 1 << 20) -> dict[str, Any] | None:
    """The first JSON object line of a file (cheap peek), or ``None``."""
    try:
        with open_file(path) as f:
            for _ in range(50):
                line = f.readline(limit)
                if not line:
                    return None
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except (ValueError, RecursionError):
                    return None
                return value if isinstance(value, dict) else None
    except (OSError, InvalidInputError):
        return None
    return None
