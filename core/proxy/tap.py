"""The recording side of a forwarded response: bytes in (as sent to the client), an
``Assembled`` out. Undoes a gzip/deflate content encoding, splits server-sent events,
and keeps a plain body whole until it ends."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

from core.llm.errors import ModelCallError
from core.llm.sse import SseDecoder
from core.proxy.assemble import Assembled, Assembly

MAX_PLAIN = 64 * 1024 * 1024


class ResponseTap:
    def __init__(self, assembly: Assembly, content_type: str, encoding: str) -> None:
        self.assembly = assembly
        self.streaming = "text/event-stream" in content_type.lower()
        self._inflate = _decompressor(encoding.lower().strip())
        self.undecodable = encoding.lower().strip() not in ("", "identity") and (
            self._inflate is None
        )
        self._sse = SseDecoder()
        self._pending = b""
        self._plain: list[bytes] = []
        self._plain_size = 0
        self.events = 0

    def feed(self, data: bytes) -> None:
        if self.undecodable:
            return
        if self._inflate is not None:
            data = self._inflate.decompress(data)
        if not self.streaming:
            if self._plain_size + len(data) <= MAX_PLAIN:
                self._plain.append(data)
            self._plain_size += len(data)
            return
        lines = (self._pending + data).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            self._line(line.rstrip(b"\r").decode("utf-8", "replace"))

    def _line(self, line: str) -> None:
        try:
            event = self._sse.feed_line(line)
        except ModelCallError:
            return  # a line no SSE reader knows: the client got it; recording skips it
        if event is not None:
            self.events += 1
            self.assembly.event(event.event, event.data)

    def finish(self) -> Assembled:
        """What the response said, once its bytes ended (or stopped)."""
        if self.undecodable:
            return Assembled(error="response content encoding not decoded; not assembled")
        if self.streaming:
            if self._pending:
                self._line(self._pending.rstrip(b"\r").decode("utf-8", "replace"))
            event = self._sse.close()
            if event is not None:
                self.assembly.event(event.event, event.data)
        else:
            self._plain_body()
        return self.assembly.result()

    def _plain_body(self) -> None:
        data = b"".join(self._plain)
        obj: Any
        try:
            obj = json.loads(data) if data else None
        except ValueError:
            obj = None
        if obj is not None:
            self.assembly.body(obj)

    def plain_text(self, limit: int = 4000) -> str:
        return b"".join(self._plain)[:limit].decode("utf-8", "replace")


def _decompressor(encoding: str) -> Any:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    return None


class HeldTap:
    """A ``ResponseTap`` fed off the forwarding path: the relay only holds each piece (no
    decoding, SSE splitting or JSON on the event loop between two chunks); the pieces are
    fed on the store's worker thread, a batch each time ``HOLD`` bytes are held (``run``
    queues it there, in order) and the rest by ``settle`` once the response ended."""

    HOLD = 1 << 20

    def __init__(self, tap: ResponseTap, run: Callable[[Callable[[], None]], object]) -> None:
        self.tap = tap
        self._run = run
        self._held: list[bytes] = []
        self._size = 0
        self._failed: Exception | None = None

    def feed(self, data: bytes) -> None:
        self._held.append(data)
        self._size += len(data)
        if self._size >= self.HOLD:
            batch = self._take()
            self._run(lambda: self._feed_all(batch))

    def settle(self) -> None:
        """Feed what is still held (on the worker thread, after every batch queued); raises
        what feeding a batch raised (the rest was not fed)."""
        self._feed_all(self._take())
        if self._failed is not None:
            raise self._failed

    def _take(self) -> list[bytes]:
        batch, self._held, self._size = self._held, [], 0
        return batch

    def _feed_all(self, batch: list[bytes]) -> None:
        if self._failed is not None:
            return
        try:
            for data in batch:
                self.tap.feed(data)
        except Exception as exc:  # kept for ``settle``: a batch runs where no one waits
            self._failed = exc
