"""Times as sources write them, read the same on every machine.

``parse_time`` reads ISO-8601 strings and epoch numbers. Some tools write their times
without a zone ("naive"): OpenHands writes event times with Python's
``datetime.now().isoformat()``, the wall clock of the machine that ran the agent
(``2025-01-27T22:44:56.900854``). Read in the zone of the machine running ctxlens, the same
file gave a start 8 h apart on two machines. A naive time is read as UTC wherever ctxlens
runs, and counted (``naive_times_read``): the trace then says its zone was not recorded
(``time_basis``, ``UNKNOWN_ZONE``; ``core/importers/base.py:TraceBuilder.finish``). Where
the same file also holds absolute times of the same events (an LLM response's
``created``, epoch seconds), ``local_offset`` finds the recording machine's UTC offset from
them and ``SourceClock`` applies it, recording how (``SourceClock.basis``). The inspector
shows a time whose zone is unknown as the recorded wall clock, marked "time zone not
recorded" (``core/inspector/recorded_time.py``).

This module imports no other importer module: every importer, and the builder, use it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

QUARTER_HOUR = 900
"""Seconds: every zone's offset from UTC is a whole number of quarter hours."""
OFFSETS = range(-12 * 60, 14 * 60 + 1)
"""Minutes east of UTC a zone can have (UTC−12:00 … UTC+14:00)."""
UNKNOWN_ZONE: dict[str, Any] = {"naive": True, "offset_minutes": None, "from": None}
"""``time_basis`` of a trace whose times have no zone and whose file holds nothing to find
it by: they were read as UTC, which they may not be."""

_EPOCH = datetime(1970, 1, 1)
_NAIVE = threading.local()
"""How many naive times this thread has read (an import reads on one thread)."""


def parse_time(value: Any) -> float | None:
    """Epoch seconds from an ISO-8601 string or a number (s, ms or ns); ``None`` if unknown.

    A date and time without a zone is read as UTC, never in the zone of the machine running
    ctxlens, and counted (``naive_times_read``)."""
    if isinstance(value, str) and value and not value.isdigit():
        return read_time(value)[0]
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        v = float(value)
        if v > 1e17:  # nanoseconds (OTLP)
            return v / 1e9
        return v / 1000.0 if v > 1e11 else v
    if isinstance(value, str) and value:  # digits: epoch seconds or milliseconds
        return parse_time(int(value))
    return None


def read_time(text: str) -> tuple[float | None, bool]:
    """``(epoch seconds, naive)`` of an ISO-8601 string; a naive one is read as UTC."""
    try:  # Python 3.11 reads a trailing "Z" itself
        when = datetime.fromisoformat(text)
    except ValueError:
        return None, False
    if when.tzinfo is not None:
        return when.timestamp(), False
    _NAIVE.count = getattr(_NAIVE, "count", 0) + 1
    return (when - _EPOCH).total_seconds(), True  # what ``.timestamp()`` gives in UTC


def naive_times_read() -> int:
    """How many times without a zone this thread has read so far (a ``TraceBuilder``
    compares it at the start of its import and at its end)."""
    return int(getattr(_NAIVE, "count", 0))


@dataclass(frozen=True)
class LocalOffset:
    """The recording machine's offset from UTC, found from pairs of times of one event."""

    minutes: int
    """Minutes east of UTC (``-480``: UTC−08:00)."""
    source: str
    """What the absolute times were (``llm response created``)."""
    pairs: int
    """How many events gave a pair."""
    agreeing: int
    """How many of them gave ``minutes`` (the others gave another quarter hour)."""


def local_offset(pairs: Iterable[tuple[float, float]], source: str) -> LocalOffset | None:
    """The UTC offset of the machine that wrote naive times, from ``(naive, absolute)``
    pairs of one event each: the naive time read as UTC and the event's absolute time.
    Each pair gives the nearest whole quarter hour of their difference (a response is
    written seconds after its ``created``); the offset most pairs give wins, the one closest
    to its pairs on a tie. Differences no zone has (beyond UTC−12/UTC+14) are left out;
    ``None`` when no pair is left."""
    votes: Counter[int] = Counter()
    residue: dict[int, float] = {}
    for naive, absolute in pairs:
        diff = naive - absolute
        minutes = round(diff / QUARTER_HOUR) * (QUARTER_HOUR // 60)
        if minutes not in OFFSETS:
            continue
        votes[minutes] += 1
        off = abs(diff - minutes * 60)
        residue[minutes] = min(residue.get(minutes, off), off)
    if not votes:
        return None
    best = max(votes, key=lambda m: (votes[m], -residue[m]))
    return LocalOffset(best, source, sum(votes.values()), votes[best])


class SourceClock:
    """Reads one source's times: epoch numbers and strings with a zone as they are, naive
    strings as wall-clock times at ``offset`` (as UTC when it is unknown), counting those."""

    def __init__(self, offset: LocalOffset | None = None) -> None:
        self.offset = offset
        self._shift = 60.0 * offset.minutes if offset is not None else 0.0
        self.naive = 0
        """How many naive times were read."""

    def read(self, value: Any) -> float | None:
        if not isinstance(value, str) or not value or value.isdigit():
            return parse_time(value)
        when, naive = read_time(value)
        if not naive or when is None:
            return when
        self.naive += 1
        return when - self._shift

    def basis(self) -> dict[str, Any] | None:
        """The trace's ``time_basis``: ``None`` when every time read carried its zone (or
        was an epoch number)."""
        if not self.naive:
            return None
        if self.offset is None:
            return dict(UNKNOWN_ZONE)
        return {
            "naive": True,
            "offset_minutes": self.offset.minutes,
            "from": self.offset.source,
            "pairs": self.offset.pairs,
            "agreeing": self.offset.agreeing,
        }


def offset_text(minutes: int) -> str:
    """``UTC−08:00``, ``UTC+05:45``, ``UTC``."""
    if not minutes:
        return "UTC"
    sign = "+" if minutes > 0 else "−"
    hours, mins = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{mins:02d}"
