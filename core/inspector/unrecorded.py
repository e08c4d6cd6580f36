"""What the panes say about records a trace's source does not write (review h13c).

``core/replay/unrecorded.py:unrecorded`` is the one list of what a trace cannot tell; this
module words it. Playback and the live view say the same sentence ("Skill injections: not
recorded in this trace."), so a pane never says "No skills were injected" of an import
whose tool writes no skill injections; a ctxlens run's empty list still reads "none".
"""

from __future__ import annotations

from core.replay.unrecorded import records_runtime, unrecorded
from core.store.reader import Reader

UNKNOWN_PARTS = {
    "calls": (
        "model calls",
        "each assistant message stands for a call, and its context is what ctxlens's View "
        "gives at that point, not what the tool sent",
    ),
    "goals": ("goals", ""),
    "skills": ("skill injections", ""),
    "grants": ("grants", ""),
    "usage": ("token usage", "input tokens are counted by ctxlens"),
    "usage_per_call": (
        "token usage per call",
        "the run's totals are recorded; input tokens per call are counted by ctxlens",
    ),
}
"""What ``PlaybackState.unknown`` names, and what is shown instead."""


def unknown_note(key: str) -> str:
    """One pane's sentence: "Goals: not recorded in this trace."."""
    name, instead = UNKNOWN_PARTS.get(key, (key, ""))
    return f"{name[:1].upper()}{name[1:]}: not recorded in this trace" + (
        f"; {instead}." if instead else "."
    )


def unknown_line(unknown: tuple[str, ...]) -> str:
    """The scrubber's line: "Not recorded in this trace: model calls (…) · goals"."""
    parts = []
    for key in unknown:
        name, instead = UNKNOWN_PARTS.get(key, (key, ""))
        parts.append(f"{name} ({instead})" if instead else name)
    return "Not recorded in this trace: " + " · ".join(parts) if parts else ""


def unrecorded_panels(reader: Reader, trace_id: str) -> tuple[str, ...]:
    """Of ``goals``, ``skills`` and ``grants``, those the trace's source does not record
    (``core/replay/unrecorded.py:unrecorded``, as playback reads it); a ctxlens run's are
    never read (it records them all)."""
    trace = reader.trace(trace_id)
    if records_runtime(trace.source, trace.metadata):
        return ()
    return unrecorded(
        trace.source,
        trace.metadata,
        None,
        reader.goal_events(trace_id),
        reader.skill_injections(trace_id),
        reader.grants(trace_id),
    )


def panel_note(reader: Reader, trace_id: str, key: str) -> str:
    """What the ``key`` pane says instead of its empty list when the trace's source does
    not record it (``unknown_note``); ``""`` when an empty list means none."""
    return unknown_note(key) if key in unrecorded_panels(reader, trace_id) else ""
