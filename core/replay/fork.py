"""Fork with an edit: change one message of a trace and continue into a new trace.

The new trace copies the source up to the first main-agent call that saw the message,
with the message's content replaced (``copy_prefix(edits=…)``, marked ``metadata.edited``),
and runs on from there through the ordinary re-run (``core/replay/rerun.py``): the
recorded responses answer while the request matches the recording, and once the edit
changes what the model receives, the scripted model of a demo trace answers (on_diverge
``live``) or the run stops (``stop``, a trace without an offline model). The source is
untouched; ``metadata.replay_of.edited_sequence`` names the edited message.
"""

from __future__ import annotations

from typing import Literal

from core.agents import is_main_agent
from core.errors import InvalidInputError
from core.lineage import fork_title
from core.llm.settings import ModelSettings
from core.replay.calls import CallRef, live_calls, trace_calls
from core.replay.rerun import ReplayOptions
from core.store import Store

OnDiverge = Literal["stop", "live", "auto"]
"""After the edit: the offline model (live), stop, or live where there is one (auto)."""


def fork_call(live: list[CallRef], sequence: int) -> int:
    """Position of the first main-agent call of the current run that received message
    ``sequence`` (the fork continues from there)."""
    for c in live:
        if is_main_agent(c) and c.head is not None and c.head >= sequence:
            return c.position
    raise InvalidInputError(
        f"--at {sequence}: no model call of the current run came after that message, so "
        "there is nothing to continue; edit an earlier message"
    )


def fork_options(
    store: Store,
    trace_id: str,
    sequence: int,
    content: str,
    *,
    on_diverge: OnDiverge = "auto",
    endpoint: ModelSettings | None = None,
) -> tuple[str, ReplayOptions]:
    """(source trace id, the re-run options of the fork), checking the message exists on
    the trace's main path; ``endpoint``: a configured model answers after the edit. The
    fork runs as any re-run: ``core/replay/rerun.py:replay(store, *fork_options(…))``."""
    with store.read() as r:
        source = r.find_trace(trace_id)
        rows = r.path_rows(source.id, [sequence], r.segments(source.id))
        if sequence not in rows:
            raise InvalidInputError(
                f"--at {sequence}: trace {source.id} has no message {sequence} on its main path"
            )
        message = r.message(source.id, sequence)
        calls = trace_calls(r, source.id)
        live = live_calls(r, source.id, calls)
    at = fork_call(live, sequence)
    name = fork_title(source.title, sequence, message.role)
    opts = ReplayOptions(at, (), on_diverge, name, edit=(sequence, content), endpoint=endpoint)
    return source.id, opts
