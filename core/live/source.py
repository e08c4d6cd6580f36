"""What every live source shares: its status for the Sources pane and its change events.

A source (a folder watcher, the OTLP receiver, the recording proxy) runs on its own thread,
writes to the store as data arrives and tells a listener which trace grew. The GUI lists
sources through ``Source.status`` only, so a new kind of source needs no new pane code.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

State = Literal["stopped", "starting", "running", "listening", "error"]
"""``listening``: a server (the recording proxy) bound and waiting for clients."""


@dataclass(frozen=True)
class SourceStatus:
    """One row of the Sources pane."""

    kind: str
    """watch | otlp | proxy"""
    name: str
    state: State
    address: str
    traces_seen: int
    errors: int
    last_error: str = ""
    calls: int | None = None
    """Model calls recorded (the proxy); ``None`` where a source does not count them."""


@dataclass(frozen=True)
class LiveChange:
    """A trace written or grown by a source (one store transaction)."""

    source: str
    trace_id: str
    new_trace: bool
    messages: int
    """Messages added by this change."""
    where: str = ""
    """The file or request the data came from."""

    def to_json(self) -> dict[str, object]:
        return {
            "event": "trace" if self.new_trace else "append",
            "source": self.source,
            "trace_id": self.trace_id,
            "messages": self.messages,
            "where": self.where,
        }


Listener = Callable[[LiveChange], None]


class Source(Protocol):
    """A way in for live data; ``start`` and ``stop`` return at once."""

    def status(self) -> SourceStatus: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


class Tally:
    """Traces seen and errors of one source, safe to update from its threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: set[str] = set()
        self.errors = 0
        self.last_error = ""
        self.recent: deque[str] = deque(maxlen=100)
        """The newest error messages (the CLI prints them as they come)."""

    def saw(self, trace_id: str) -> None:
        with self._lock:
            self._traces.add(trace_id)

    def failed(self, message: str) -> None:
        with self._lock:
            self.errors += 1
            self.last_error = message
            self.recent.append(message)

    def take_errors(self) -> list[str]:
        with self._lock:
            out = list(self.recent)
            self.recent.clear()
            return out

    @property
    def traces_seen(self) -> int:
        with self._lock:
            return len(self._traces)
