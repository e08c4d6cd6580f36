"""Fork with an edit: change one message of a trace and continue into a new trace.

The new trace copies the source up to the first main-agent call that saw the message,
with the message's content replaced (``copy_prefix(edits=…)``, marked ``metadata.edited``),
and runs on from there through the ordinary re-run (``core/replay/rerun.py``): the
recorded responses answer while the request matches the recording, and once the edit
changes what the model receives, the scripted model of a demo trace answers (on_diverge
``live``) or the run stops (``stop``, a trace without an offline model). The source is
untouched; ``metadata.replay_of.edited_sequence`` names the edited message.

``after_edit_choices`` lists, for one trace, the ways it can go on that really differ (the
dialog's words; the keys are ``ctxlens fork --model``'s): a configured endpoint, the demo's
scripted model (demo traces only), or stop. ``auto`` is not one of them: it is the
scripted model where there is one and stop elsewhere, never a third behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from core.agents import is_main_agent
from core.errors import InvalidInputError
from core.lineage import fork_title
from core.llm.settings import ENV_BASE_URL, ENV_MODEL, ModelSettings
from core.replay.calls import CallRef, live_calls, trace_calls
from core.replay.endpoint import describe
from core.replay.rerun import ReplayOptions
from core.run.rerunners import rerunner_for
from core.store import Store

OnDiverge = Literal["stop", "live", "auto"]
"""After the edit: the offline model (live), stop, or live where there is one (auto)."""


@dataclass(frozen=True)
class AfterEdit:
    """One way a fork goes on once the edit changes what the model receives."""

    key: Literal["endpoint", "scripted", "stop"]
    """As ``ctxlens fork --model`` names it."""
    on_diverge: OnDiverge
    label: str
    """What happens, in a line (the dialog's choice)."""
    detail: str
    """What the new trace then holds (the choice's tooltip)."""


def after_edit_choices(
    metadata: dict[str, Any] | None, endpoint: ModelSettings | None
) -> tuple[AfterEdit, ...]:
    """The choices that differ for a trace with this metadata, the default first: the
    configured endpoint (when there is one), the demo's scripted model (when the trace has
    an offline model: ``core/run/rerunners.py``), and stop (always)."""
    out = []
    if endpoint is not None:
        out.append(AfterEdit(
            "endpoint", "live", f"the configured {describe(endpoint)} answers",
            "Each request after the edit is sent to that endpoint; the new trace records its "
            "replies with the usage and model it reported.",
        ))  # fmt: skip
    if rerunner_for(metadata) is not None:
        out.append(AfterEdit(
            "scripted", "live", "the demo's scripted model answers",
            "The demo's offline model decides from the edited context alone, so the new "
            "trace shows what the edit changes; nothing leaves this computer.",
        ))  # fmt: skip
    out.append(AfterEdit(
        "stop", "stop", "stop there: no model answers",
        "The new trace holds the copied messages with the edited one and ends where the "
        "first model call would have received it.",
    ))  # fmt: skip
    return tuple(out)


def no_model_note(choices: tuple[AfterEdit, ...]) -> str:
    """Why only stop is offered ("" when a model can answer after the edit)."""
    if any(c.key != "stop" for c in choices):
        return ""
    return (
        "No model can answer after the edit for this trace: only demo traces have an "
        f"offline model. Set {ENV_BASE_URL} and {ENV_MODEL} to continue on a model endpoint."
    )


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
