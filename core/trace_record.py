"""``Trace``: one recorded agent run, the record alone.

Kept apart from ``core/records.py`` (which re-exports it) so ``ctxlens traces`` lists a
store through ``core/store/quick.py`` with the same record, without importing every other
record type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Trace:
    """One recorded agent run (or imported session)."""

    id: str
    title: str
    source: str
    created_at: float
    head: int | None
    messages: int
    """Number of messages stored for the trace (all branches)."""
    metadata: Any = None
