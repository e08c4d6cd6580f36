"""Messages whose time the source did not record (trace metadata ``undated``).

A message is stored with a ``created_at``; an importer that finds no time for one in the
file gives it the trace's one fill time instead: the trace's recorded start when the
importer knows it when the trace is opened, else the import time. Which messages got it is
kept in the trace's metadata, so no reader shows that fill as a recorded time::

    "undated": {"messages": 3, "filled_with": "trace start", "at": 1739305084.811445,
                "sequences": [[0, 0], [4, 5]]}

``sequences`` are inclusive ranges of message sequences; ``at`` is the ``created_at``
every one of them holds. A trace without the key (a ctxlens run, a trace imported before
it existed) has every message's time recorded. Written by
``core/importers/base.py:TraceBuilder`` (``docs/decisions.md``, "Undated messages (h13f)");
read by the Message pane, ``ctxlens show --json`` and the lossless export
(``created_recorded`` per message), and carried by an export's re-import as metadata.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

KEY = "undated"
#: ``filled_with``: what the fill time is.
TRACE_START = "trace start"
IMPORT_TIME = "import time"


@dataclass(frozen=True, slots=True)
class Undated:
    """The messages of one trace that carry no recorded time."""

    messages: int
    filled_with: str
    """``TRACE_START`` or ``IMPORT_TIME``."""
    at: float
    """The ``created_at`` given to each of them."""
    sequences: tuple[tuple[int, int], ...]
    """Inclusive ranges, ascending, not touching."""

    def covers(self, sequence: int) -> bool:
        """Whether message ``sequence`` has no recorded time."""
        spans = self.sequences
        i = bisect_right(spans, (sequence, float("inf"))) - 1
        return i >= 0 and spans[i][0] <= sequence <= spans[i][1]

    def to_json(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "filled_with": self.filled_with,
            "at": self.at,
            "sequences": [list(r) for r in self.sequences],
        }


def undated_of(metadata: Any) -> Undated | None:
    """The trace's ``undated`` record, or ``None`` (every message's time recorded, or a
    value this version does not read)."""
    if not isinstance(metadata, dict):
        return None
    raw = metadata.get(KEY)
    if not isinstance(raw, dict):
        return None
    at, seqs = raw.get("at"), raw.get("sequences")
    if not isinstance(at, int | float) or not isinstance(seqs, list):
        return None
    ranges = merged(
        (int(r[0]), int(r[1]))
        for r in seqs
        if isinstance(r, list | tuple) and len(r) == 2 and all(type(x) is int for x in r)
    )
    filled = raw.get("filled_with")
    return Undated(
        _count(ranges),
        filled if isinstance(filled, str) else IMPORT_TIME,
        float(at),
        ranges,
    )


def created_recorded(metadata: Any) -> Any:
    """``sequence -> bool``: whether a message of the trace with this metadata has a
    recorded time (a function, so a caller over many messages reads the metadata once)."""
    undated = undated_of(metadata)
    if undated is None:
        return _always
    return lambda sequence: not undated.covers(sequence)


def _always(sequence: int) -> bool:  # noqa: ARG001 (the predicate's signature)
    return True


def merged(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Inclusive ranges sorted and joined where they overlap or touch."""
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if hi < lo:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def _count(ranges: Sequence[tuple[int, int]]) -> int:
    return sum(hi - lo + 1 for lo, hi in ranges)


def record(ranges: Iterable[tuple[int, int]], filled_with: str, at: float) -> dict[str, Any] | None:
    """The metadata value for these ranges (``None``: no message is undated)."""
    spans = merged(ranges)
    if not spans:
        return None
    return Undated(_count(spans), filled_with, at, spans).to_json()


def fill_words(filled_with: str, at: float) -> str:
    """What a reader says instead of a time: ``not recorded (trace start 2025-02-11
    15:18:04)``, ``not recorded (imported 2026-12-07 03:26)``."""
    when = time.localtime(at)
    if filled_with == TRACE_START:
        return f"not recorded (trace start {time.strftime('%Y-%m-%d %H:%M:%S', when)})"
    return f"not recorded (imported {time.strftime('%Y-%m-%d %H:%M', when)})"
