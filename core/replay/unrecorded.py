"""What a trace's source records, and so what an empty list in it means.

A ctxlens run (its own sources, or any trace that carries a ``run_config``) writes its goal
events, skill injections and grants as they happen: none recorded there means none
happened. A trace another tool wrote (an import, an agent behind the recording proxy) has
none of them because that tool writes no such records: an empty list there tells nothing,
and a pane says "not recorded in this trace", never "none". ``unrecorded`` is the one list
of what a trace cannot tell; playback (``core/replay/playback.py:Playback``) and the live
panes (``core/inspector/panels.py:unrecorded_panels``) both read it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from core.importers.usage import recorded_totals
from core.replay.calls import CallRef

NATIVE_SOURCES = ("ctxlens", "ctxlens-demo", "ctxlens-replay", "ctxlens-delegation")
"""Sources ctxlens's own runtime wrote (a delegated child runs it too)."""


def records_runtime(source: str, meta: Any) -> bool:
    """Whether the trace was written by ctxlens's runtime, which records goals, skill
    injections and grants whenever there are any."""
    return source in NATIVE_SOURCES or (isinstance(meta, Mapping) and "run_config" in meta)


def unrecorded(
    source: str,
    meta: Any,
    calls: Sequence[CallRef] | None,
    events: Collection[object],
    skills: Collection[object],
    grants: Collection[object],
) -> tuple[str, ...]:
    """What a trace cannot tell, by key: ``calls`` (no call records: each assistant
    message stands for one), ``goals``, ``skills``, ``grants`` (another tool's trace with
    none of them), ``usage`` (no call recorded its tokens), ``usage_per_call`` (no call
    recorded its tokens, the run's totals are recorded: ``core/importers/usage.py``).
    ``calls=None``: not asked (the live panes need only the records)."""
    out = []
    if calls is not None and (not calls or not calls[0].recorded):
        out.append("calls")
    if records_runtime(source, meta):
        return tuple(out)
    for key, found in (("goals", events), ("skills", skills), ("grants", grants)):
        if not found:
            out.append(key)
    if calls and all(c.input_tokens is None for c in calls):  # no call's own usage;
        totals = recorded_totals(meta)  # the run's totals may be recorded (SWE-agent)
        out.append("usage_per_call" if totals and totals.counts_tokens else "usage")
    return tuple(out)
