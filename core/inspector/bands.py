"""Compaction boundaries as timeline bands: where each sits and what it says.

A ``CompactionEvent`` is anchored after ``at_sequence``, the last main-path message when it
was applied. On the current main path that is a row; a boundary whose anchor is no longer
on the path (a rewind went before it) is *detached* and shown apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.records import CompactionEvent
from core.store.paths import Segment

if TYPE_CHECKING:  # a Reader or the first page's sqlite3 reader (no SQLAlchemy)
    from core.store.path_reads import EitherReader

#: What each compaction level did, in words a user reads without knowing the level names.
LEVEL_NAMES = {
    "goal": "finished goal",
    "snip": "middle messages snipped",
    "micro": "old tool results shortened",
    "aggressive": "tool results shortened",
    "summary": "summarized",
    "identity": "summarized, identity block re-added",
    "naive": "oldest messages dropped",
    "elided": "observations elided",
}


@dataclass(frozen=True, slots=True)
class Band:
    event_id: int | None
    level: str
    after_row: int
    """The band is drawn after this main-path row (-1: before the first row)."""
    at_sequence: int | None
    text: str
    tokens_saved: int
    messages_before: int
    messages_after: int
    removed: tuple[int, ...]


def band_text(ev: CompactionEvent) -> str:
    """E.g. ``finished goal 1.2: 14 messages left the context, −3,240 tokens``."""
    saved = ev.tokens_before - ev.tokens_after
    tokens = f"−{saved:,} tokens" if saved >= 0 else f"+{-saved:,} tokens"
    if ev.level == "goal":
        left = len(ev.removed) or max(0, ev.messages_before - ev.messages_after)
        goal = f" {ev.goal_id}" if ev.goal_id else ""
        return f"finished goal{goal}: {left} messages left the context, {tokens}"
    name = LEVEL_NAMES.get(ev.level, ev.level)
    figures = imported_figures(ev)
    if figures:  # an import: the figures themselves, and whether the tool recorded them
        tokens = figures
    if ev.level == "elided":  # nothing left: old outputs shortened to the tool's marker
        return f"{_elided(ev, name)}, {tokens}"
    return f"{name}: {ev.messages_before} → {ev.messages_after} messages, {tokens}"


def _elided(ev: CompactionEvent, name: str) -> str:
    """E.g. ``observations elided (SWE-agent history processor): 16 messages kept`` (``by``:
    who elided them, as the importer recorded it). Which messages were shortened the rows
    say ("shortened"), and how many the status line; the band stays short enough to show
    its token figures at 1600 px."""
    d = ev.details if isinstance(ev.details, dict) else {}
    by = d.get("by")
    head = f"{name} ({by})" if isinstance(by, str) and by else name
    return f"{head}: {ev.messages_after:,} message{'s' if ev.messages_after != 1 else ''} kept"


def imported_figures(ev: CompactionEvent) -> str:
    """An imported boundary's token figures as the tool recorded them (``details.
    tokens_recorded``): ``167,094 → 33,960 tokens (recorded)``; a figure ctxlens estimated
    carries its own "≈" (``≈4,762 → ≈4,725 tokens``), so a band cut short at its end still
    says which figures are estimates (an "(estimated)" at the end was the first thing cut,
    screenshot review); ``(before recorded)`` where only one was. Empty for ctxlens's own
    compactions (exact counts)."""
    rec = ev.details.get("tokens_recorded") if isinstance(ev.details, dict) else None
    if not isinstance(rec, dict):
        return ""
    before, after = bool(rec.get("before")), bool(rec.get("after"))
    text = f"{_figure(ev.tokens_before, before)} → {_figure(ev.tokens_after, after)} tokens"
    if before and after:
        return f"{text} (recorded)"
    if before or after:
        return f"{text} ({'before' if before else 'after'} recorded)"
    return text


def _figure(tokens: int, recorded: bool) -> str:
    return f"{tokens:,}" if recorded else f"≈{tokens:,}"


def bands(
    reader: EitherReader, trace_id: str, segments: list[Segment]
) -> tuple[list[Band], list[Band]]:
    """``(on_path, detached)``; on-path bands sorted by row, then by record order."""
    events = reader.compactions(trace_id)
    rows = reader.path_rows(
        trace_id, [e.at_sequence for e in events if e.at_sequence is not None], segments
    )
    placed: list[Band] = []
    detached: list[Band] = []
    for ev in events:
        if ev.at_sequence is None:
            placed.append(_band(ev, -1))
        elif ev.at_sequence in rows:
            placed.append(_band(ev, rows[ev.at_sequence]))
        else:
            detached.append(_band(ev, -1))
    placed.sort(key=lambda b: b.after_row)  # stable: record order within a row
    return placed, detached


def _band(ev: CompactionEvent, row: int) -> Band:
    return Band(
        ev.id,
        ev.level,
        row,
        ev.at_sequence,
        band_text(ev),
        ev.tokens_before - ev.tokens_after,
        ev.messages_before,
        ev.messages_after,
        ev.removed,
    )
