"""Reading one big JSON document piece by piece (Inspect logs, trajectories, span dumps).

Many tools write a whole run as one JSON document: a list of events, or an object whose
``samples``/``history``/``spans`` member holds the bulk. ``JsonDocument`` walks the top
level itself and decodes only one member value or one array item at a time with the C
decoder, so memory is bounded by the largest single item, not by the file. An item larger
than ``MAX_VALUE`` characters is an error.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import IO, Any

from core.errors import InvalidInputError

CHUNK = 1 << 20
#: Largest single member value or array item decoded at once (characters).
MAX_VALUE = 512 << 20
_WS = " \t\r\n"
#: What a value nested deeper than the decoder's recursion limit is called.
TOO_DEEP = "data nested too deeply (over ~1,000 levels of [ and {)"


class BeyondLimits(InvalidInputError):
    """A value no importer reads (nested too deeply, or too big): detection reports it
    with the file and line rather than guessing another format."""


class JsonDocument:
    """Incremental reader over the top level of one JSON document."""

    def __init__(
        self, f: IO[bytes] | io.RawIOBase, where: str, max_value: int | None = None
    ) -> None:
        self.where = where
        self.max_value = MAX_VALUE if max_value is None else max_value
        if isinstance(f, io.RawIOBase):
            f = io.BufferedReader(f, CHUNK)
        self._text = io.TextIOWrapper(f, encoding="utf-8", errors="strict")
        self._dec = json.JSONDecoder()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._line = 1  # line number of buf[0]

    # -- buffer -------------------------------------------------------------------------
    def _read(self, n: int) -> None:
        if self.eof:
            return
        try:
            chunk = self._text.read(n)
        except UnicodeDecodeError:
            raise InvalidInputError(
                f"{self.where}:{self._line_at(len(self.buf))}: not UTF-8 text"
            ) from None
        if not chunk:
            self.eof = True
        self.buf += chunk

    def _drop_consumed(self) -> None:
        if self.pos > CHUNK:
            self._line += self.buf.count("\n", 0, self.pos)
            self.buf = self.buf[self.pos :]
            self.pos = 0

    def _line_at(self, p: int) -> int:
        return self._line + self.buf.count("\n", 0, p)

    def error(
        self, message: str, p: int | None = None, kind: type[InvalidInputError] = InvalidInputError
    ) -> InvalidInputError:
        return kind(f"{self.where}:{self._line_at(self.pos if p is None else p)}: {message}")

    def _peek(self) -> str:
        """The next non-blank character ('' at the end of the file), not consumed."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self._drop_consumed()
            self._read(CHUNK)

    def _expect(self, chars: str) -> str:
        c = self._peek()
        if not c:
            raise self.error("unexpected end of file (truncated?)")
        if c not in chars:
            raise self.error(f"expected {' or '.join(repr(x) for x in chars)}, found {c!r}")
        self.pos += 1
        return c

    # -- values -------------------------------------------------------------------------
    def value(self) -> Any:
        """Decode the complete JSON value at the current position."""
        if not self._peek():
            raise self.error("unexpected end of file (truncated?)")
        self._drop_consumed()
        while True:
            start = self.pos
            try:
                obj, end = self._dec.raw_decode(self.buf, start)
            except RecursionError:
                raise self.error(TOO_DEEP, start, BeyondLimits) from None
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise self.error(f"invalid JSON: {exc.msg}", exc.pos) from None
                self._grow(start)
                continue
            if end >= len(self.buf) and not self.eof:
                self._grow(start)  # a number may continue in the next chunk
                continue
            self.pos = end
            return obj

    def _grow(self, start: int) -> None:
        size = len(self.buf) - start
        if size > self.max_value:
            raise self.error(
                f"a single JSON value is over {self.max_value >> 20} MB; refusing to load it",
                start,
                BeyondLimits,
            )
        self._read(max(CHUNK, size))

    def peek(self) -> str:
        """The first character of the next value (not consumed; '' at the end)."""
        return self._peek()

    def begin(self) -> str:
        """Enter the top-level value: returns '[' or '{'."""
        c = self._peek()
        if c not in ("[", "{"):
            raise self.error("not a JSON document (expected '[' or '{')" if c else "empty file")
        self.pos += 1
        return c

    def items(self) -> Iterator[Any]:
        """Items of the array just entered (after its '['), decoded one at a time."""
        if self._peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            if self._expect(",]") == "]":
                return

    def enter_array(self) -> bool:
        """If the next value is an array, step into it and return True."""
        if self._peek() == "[":
            self.pos += 1
            return True
        return False

    def members(self) -> Iterator[str]:
        """Member names of the object just entered; the caller consumes each value
        (``value()``, or ``enter_array()`` + ``items()``) before asking for the next."""
        if self._peek() == "}":
            self.pos += 1
            return
        while True:
            if self._peek() != '"':
                raise self.error("expected a member name")
            key = self.value()
            self._expect(":")
            yield str(key)
            if self._expect(",}") == "}":
                return

    def end(self) -> None:
        """Check nothing but blanks follows the document."""
        if self._peek():
            raise self.error("unexpected data after the JSON document")


def read_document(f: IO[bytes] | io.RawIOBase, where: str) -> Any:
    """A whole (small) document through the same error reporting."""
    doc = JsonDocument(f, where)
    value = doc.value()
    doc.end()
    return value
