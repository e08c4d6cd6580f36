"""What the inspector's panes show while scrubbing through a trace (issue 9, part 1).

``PlaybackFrames.open`` indexes a trace once (``core/replay/playback.py:Playback``); each
``frame(reader, stop)`` turns the ``PlaybackState`` of one of the main agent's calls into
the rows the panes already know how to show: the goal outline as of the call (statuses
from ``state.goals``, message counts up to its head), skill and grant rows as of then, the
sequences in the call's context (the timeline's "in context"), the budget limits and the
scrubber's labels. What an imported trace does not record is named (``notes``), never
shown as an empty panel as if it were known.

A frame's ``prompt`` is the call's prompt measured as the Context pane measures the same call
(``core/inspector/prompt.py:prompt_measure``: the recorded prompt where it is recorded, the
part the transcript lacks drawn as its own), so the Budget pane beside it agrees. Token
figures say where they come from: a call's input is its recorded usage ("recorded") or
ctxlens's count ("counted"); a sum over calls some of which recorded nothing says so
("≥ 25,799 out (3 calls unknown)", "— out"), never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.context.budget import Budget, budget_of
from core.importers.usage import OPEN_AT_STOP_WORDS, RecordedTotals
from core.inspector.call_numbers import CallNumbering, agent_role
from core.inspector.goals import GoalNode, goal_outline
from core.inspector.images import ImageEstimate, image_estimate, image_parts
from core.inspector.panels import GrantRow, SkillRow, grant_row, skill_row
from core.inspector.prompt import PromptMeasure, prompt_measure
from core.inspector.recorded import recorded_of
from core.inspector.unrecorded import unknown_line, unknown_note
from core.inspector.wording import article
from core.records import ContextRef
from core.replay.playback import GrantAsOf, Playback, PlaybackState, SkillAsOf, TokensAsOf
from core.store.reader import Reader
from core.tokens.image_tokens import provider_of


# -- token figures, each saying where it comes from ----------------------------------------
def input_text(t: TokensAsOf) -> str:
    """This call's input: ``6,566 in (recorded; 6,625 counted)``, ``4,556 in (counted)``."""
    if not t.input_recorded:
        return f"{t.input:,} in (counted)"
    counted = t.input_counted
    beside = f"; {counted:,} counted" if counted is not None and counted != t.input else ""
    return f"{t.input:,} in (recorded{beside})"


def output_text(t: TokensAsOf) -> str:
    """This call's output: ``301 out``, or ``— out`` when it was not recorded; ``4 out (as of
    the watch's stop: …)`` when a watch stopped while the response was being written."""
    if t.output is None:
        return "— out"
    if t.output_open:
        return f"{t.output:,} out ({OPEN_AT_STOP_WORDS})"
    return f"{t.output:,} out"


def so_far_text(t: TokensAsOf) -> str:
    """Calls 0..n: ``335,252 in / 1,687 out (recorded)``; a sum over calls some of which
    recorded nothing says so: ``47,099 in (counted) / — out``, ``≥ 1,200 out (3 calls
    unknown)``."""
    if t.inputs_counted == 0:
        inp = f"{t.cumulative_input:,} in"
    elif t.inputs_counted >= t.calls:
        inp = f"{t.cumulative_input:,} in (counted)"
    else:
        inp = f"{t.cumulative_input:,} in ({t.inputs_counted:,} of {t.calls:,} calls counted)"
    if t.cumulative_output is None:
        out = "— out"
    elif t.outputs_unknown:
        n = t.outputs_unknown
        out = f"≥ {t.cumulative_output:,} out ({n:,} call{'s' if n != 1 else ''} unknown)"
    else:
        out = f"{t.cumulative_output:,} out"
    recorded = " (recorded)" if t.inputs_counted == 0 and t.outputs_unknown == 0 else ""
    return f"{inp} / {out}{recorded}"


def run_totals_text(totals: RecordedTotals) -> str:
    """``run totals recorded by the trace: 122,612 in / 1,369 out over 12 calls (SWE-agent
    info.model_stats)`` (``core/importers/usage.py:recorded_totals``: not any call's)."""
    inp = f"{totals.input_tokens:,}" if totals.input_tokens is not None else "—"
    out = f"{totals.output_tokens:,}" if totals.output_tokens is not None else "—"
    n = totals.calls
    calls = f" over {n:,} call{'s' if n != 1 else ''}" if n else ""
    return f"run totals recorded by the trace: {inp} in / {out} out{calls} ({totals.source})"


@dataclass(frozen=True)
class PlaybackFrame:
    """One call's state, shaped for the panes."""

    state: PlaybackState
    stop: int
    """Index of the call among the scrubber's stops."""
    goals: list[GoalNode] | None
    """``None``: the trace records no goals."""
    skills: list[SkillRow] | None
    grants: list[GrantRow] | None
    in_context: frozenset[int]
    """Message sequences in the call's context (kept as written or as a placeholder)."""
    budget: Budget
    label: str
    """"call 37 of 0–126 · main · 5,210 tokens in" (numbered on the current path)."""
    detail: str
    name: str = ""
    """"call 37": its number on the current path (the budget pane's label)."""
    prompt: PromptMeasure | None = None
    """The call's prompt as the Context pane measures it (``call_prompt``); ``None`` only
    for a frame made without it."""
    images: ImageEstimate | None = None

    def note(self, key: str) -> str:
        """What a pane says instead of rows the trace does not record ("" when it does)."""
        if key == "usage" and "usage_per_call" in self.state.unknown:  # totals recorded
            key = "usage_per_call"
        return unknown_note(key) if key in self.state.unknown else ""

    @property
    def position(self) -> int:
        return self.state.position

    @property
    def call_index(self) -> int | None:
        return self.state.call.call_index


@dataclass
class PlaybackFrames:
    """A trace indexed for the scrubber: its stops (the main agent's calls on the current
    path; those a rewind abandoned are named in ``notes``, not played back) and what the
    panes need for each."""

    trace_id: str
    playback: Playback
    stops: list[int]
    """Call positions the scrubber stops at."""
    refs: dict[str, ContextRef]
    budget: Budget
    numbering: CallNumbering
    source: str = ""
    """The trace's source (whose image rule its calls follow when the model is unknown)."""

    @classmethod
    def open(cls, reader: Reader, trace_id: str) -> PlaybackFrames:
        pb = Playback.open(reader, trace_id)
        numbering = CallNumbering.of(reader, trace_id, pb.calls)
        refs = {r.id: r for r in reader.refs(trace_id)}
        trace = reader.trace(trace_id)
        budget = budget_of(trace.source, trace.metadata)
        return cls(trace_id, pb, numbering.current_main(), refs, budget, numbering, trace.source)

    @property
    def notes(self) -> str:
        """What the trace cannot tell, and the calls a rewind abandoned (empty for a
        ctxlens run without a rewind)."""
        parts = (unknown_line(self.playback.unknown), self.numbering.abandoned_note())
        return " · ".join(p for p in parts if p)

    def stop_of(self, position: int) -> int:
        """The stop at or before call ``position`` (0 when there is none)."""
        best = 0
        for n, p in enumerate(self.stops):
            if p <= position:
                best = n
        return best

    def held_note(self, position: int, stop: int) -> str:
        """What the strip says while the Context pane shows call ``position``, one the
        scrubber does not stop at (a compaction summarizer's, a subagent's, one a rewind
        abandoned), and the other panes show ``stop``, the main call nearest before it:
        "The Context pane shows call 102 of 0–155 — compaction summarizer; playback stops at
        the main agent's calls: the other panes show call 101 of 0–155, the last one before
        it." ("" when ``position`` is that stop.)"""
        at = self.stops[stop] if 0 <= stop < len(self.stops) else None
        if at is None or at == position:
            return ""
        where = "the last one before it" if at < position else "the first one after it"
        return (
            f"The Context pane shows {self.numbering.titled(position)}; playback stops at the "
            f"main agent's calls: the other panes show {self.numbering.name(at)}, {where}."
        )

    def frame(self, reader: Reader, stop: int) -> PlaybackFrame:
        if not 0 <= stop < len(self.stops):
            raise IndexError(f"stop {stop} out of 0..{len(self.stops) - 1}")
        state = self.playback.state(reader, self.stops[stop])
        goals = None
        if state.goals is not None:
            goals = goal_outline(reader, self.trace_id, state.head, tree=state.goals)
        prompt, images = call_prompt(reader, self.source, state)
        return PlaybackFrame(
            state,
            stop,
            goals,
            None if state.skills is None else skill_rows_as_of(self.trace_id, state.skills),
            None if state.grants is None else self.grant_rows(state.grants),
            frozenset(i.sequence for i in state.context if i.sequence is not None),
            self.budget.as_of(any(b.trigger == "auto" for b in state.compactions)),
            call_label(state, self.numbering.name(state.position)),
            call_detail(state),
            self.numbering.short(state.position),
            prompt,
            images,
        )

    def grant_rows(self, grants: tuple[GrantAsOf, ...]) -> list[GrantRow]:
        out = []
        for g in grants:
            ref = self.refs.get(g.ref_id)
            out.append(
                grant_row(
                    g.ref_id, ref, g.granted_at, g.granted_by, g.cost, g.revoked_at,
                    g.revoked_reason, g.message_sequence, grant_status(g),
                )
            )  # fmt: skip
        return out


def call_prompt(
    reader: Reader, source: str, state: PlaybackState
) -> tuple[PromptMeasure, ImageEstimate | None]:
    """The call's prompt measured as the Context pane measures it
    (``core/inspector/context_report.py:call_report``): its counted context, its images'
    estimate by its model's rule, and its recorded prompt tokens."""
    pictured = []
    for item in state.context:
        msg = state.messages.get(item.sequence) if item.sequence is not None else None
        if msg is not None and item.content is None and image_parts(msg):
            pictured.append(msg)
    call = state.call
    images = None
    if pictured:
        images = image_estimate(reader, state.trace_id, pictured, provider_of(call.model, source))
    rec = recorded_of(call.usage)
    image_tokens = images.estimated_tokens if images is not None else 0
    recorded = rec.prompt_tokens if rec is not None else None
    return prompt_measure(state.tokens.by_component, image_tokens, recorded), images


def grant_status(g: GrantAsOf) -> str:
    """active (its content is in this call's context) | active, out of context | revoked."""
    if g.revoked_at is not None:
        return "revoked"
    return "active" if g.in_context else "active, out of context"


def skill_rows_as_of(trace_id: str, skills: tuple[SkillAsOf, ...]) -> list[SkillRow]:
    """Skill records made by the call, with their state in its context; a record that is
    gone names the later injection of the same skill (made by then) that replaced it."""
    return [
        skill_row(trace_id, skills, n, s.status, gone=s.status == "compacted away")
        for n, s in enumerate(skills)
    ]


def call_label(state: PlaybackState, name: str) -> str:
    """``name``: the call's number on the current path ("call 41 of 0–126")."""
    c = state.call
    parts = [name, agent_role(c) or "main"]
    t = state.tokens
    parts.append(f"{t.input:,} tokens in ({'recorded' if t.input_recorded else 'counted'})")
    if c.error:
        parts.append("failed")
    return " · ".join(parts)


def call_detail(state: PlaybackState) -> str:
    """Where the call stood and what had happened by then (the scrubber's second line)."""
    parts = []
    if state.head is None:
        parts.append("before the first message")
    elif state.head_row is None:
        parts.append(f"head #{state.head}, on a branch off the main path")
    else:
        parts.append(f"head #{state.head} (row {state.head_row})")
    t = state.tokens
    n_items = len(state.context)
    parts.append(f"{n_items:,} item{'s' if n_items != 1 else ''}")
    if t.output is not None:
        so_far = f" ({OPEN_AT_STOP_WORDS})" if t.output_open else ""
        parts.append(f"{t.output:,} tokens out{so_far}")
    parts.append(f"so far {so_far_text(t)}")
    if t.run_totals is not None:
        parts.append(run_totals_text(t.run_totals))
    active = next((b for b in state.compactions if b.active), None)
    n = len(state.compactions)
    if n:
        where = f" from #{active.at_sequence}" if active and active.at_sequence is not None else ""
        boundary = f"{article(active.level)} {active.level} boundary" if active else ""
        last = f"; context starts from {boundary}{where}" if active else ""
        parts.append(f"{n} compaction{'s' if n != 1 else ''}{last}")
    else:
        parts.append("no compaction yet")
    parts.append(state.context_origin.text)  # the Context pane's words for the same call
    return " · ".join(parts)


def frame_json(frame: PlaybackFrame) -> dict[str, Any]:
    """The frame as JSON (tests and debugging)."""
    return {
        **frame.state.to_json(),
        "stop": frame.stop,
        "label": frame.label,
        "detail": frame.detail,
        "prompt": frame.prompt.to_json() if frame.prompt is not None else None,
    }
