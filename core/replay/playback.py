"""Playback: the state of everything as of model call N, for scrubbing through a trace.

``Playback.open`` indexes a trace once (its calls, goal events, skill records, grants,
compaction boundaries and where each of their messages sits in the message tree);
``state(reader, n)`` then answers for call ``n``: the head the call was made at, the
GoalTree at that head, the exact context the model received, the skills and grants that
existed by then (created and revoked relative to that head, on its path), the boundaries
on the path so far and the token totals. Per call it reads only the context's messages.

Imported traces may lack goals, skill records, grants or call records; ``unknown`` names
what the trace cannot say instead of showing an empty panel as if it were known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.context.budget import budget_of
from core.context.view import View, current_items, token_breakdown
from core.goals import GoalTree
from core.goals.replay import replay as replay_goals
from core.importers.usage import RecordedTotals, recorded_totals
from core.records import (
    CompactionEvent,
    ContextItem,
    GoalEvent,
    Grant,
    Message,
    SkillInjection,
)
from core.replay.calls import CallRef, trace_calls
from core.replay.context_origin import ContextOrigin, context_origin
from core.replay.unrecorded import unrecorded
from core.store.paths import LineInfo, Segment, on_path, path_segments
from core.store.reader import Reader


@dataclass(frozen=True, slots=True)
class SkillAsOf:
    skill: str
    message_sequence: int
    call_sequence: int | None
    reason: str
    status: str
    """present (its result is in this call's context) | re-injected | compacted away."""


@dataclass(frozen=True, slots=True)
class GrantAsOf:
    grant_id: int | None
    ref_id: str
    granted_by: str
    reason: str
    cost: Any
    granted_at: int | None
    message_sequence: int | None
    revoked_at: int | None
    """Set only when the revocation happened by this call."""
    revoked_reason: str | None
    in_context: bool
    """The grant's content message is in this call's context."""

    @property
    def status(self) -> str:
        return "revoked" if self.revoked_at is not None else "active"


@dataclass(frozen=True, slots=True)
class BoundaryAsOf:
    id: int | None
    level: str
    trigger: str
    at_sequence: int | None
    tokens_before: int
    tokens_after: int
    removed: int
    before_call: int | None
    """Position of the first call made after it."""
    active: bool
    """The boundary this call's context starts from."""


@dataclass(frozen=True, slots=True)
class TokensAsOf:
    input: int
    """Tokens this call sent: the prompt tokens its usage recorded, else ctxlens's count
    (``input_recorded`` says which)."""
    output: int | None
    """``None``: the call's output tokens were not recorded."""
    cumulative_input: int
    """Input tokens of calls 0..n (every agent), each taken as ``input`` is."""
    cumulative_output: int | None
    """Recorded output tokens of calls 0..n: a lower bound when ``outputs_unknown`` calls
    recorded none, ``None`` when none of them did (unknown, never 0)."""
    by_component: dict[str, int]
    context_total: int
    window: int | None
    input_recorded: bool = False
    """``input`` is the model's recorded usage (else ctxlens's count)."""
    input_counted: int | None = None
    """ctxlens's own count of this call's request (a ctxlens run), shown beside the record."""
    calls: int = 0
    """Calls 0..n."""
    inputs_counted: int = 0
    """Of calls 0..n, those whose input is ctxlens's count (no usage recorded)."""
    outputs_unknown: int = 0
    """Of calls 0..n, those whose output tokens were not recorded."""
    run_totals: RecordedTotals | None = None
    """The run's totals where the trace records only those and no call's own (SWE-agent
    ``model_stats``: ``core/importers/usage.py:recorded_totals``)."""
    output_open: bool = False
    """``output`` is of a response a live capture stopped in (``CallRef.output_open``)."""


@dataclass(frozen=True)
class PlaybackState:
    trace_id: str
    position: int
    call: CallRef
    head: int | None
    head_row: int | None
    """The head's row on the trace's main path (``None``: on another branch)."""
    response_sequence: int | None
    context: tuple[ContextItem, ...]
    context_recorded: bool
    """``False``: rebuilt by ctxlens from the transcript at ``head`` (the tool logged no
    request, or the trace has no call records): ``context_origin.recorded``."""
    context_origin: ContextOrigin
    """Where the context comes from, in the words every pane uses
    (``core/replay/context_origin.py:context_origin``)."""
    goals: GoalTree | None
    skills: tuple[SkillAsOf, ...] | None
    grants: tuple[GrantAsOf, ...] | None
    compactions: tuple[BoundaryAsOf, ...]
    tokens: TokensAsOf
    unknown: tuple[str, ...] = ()
    messages: Mapping[int, Message] = field(default_factory=dict, repr=False, compare=False)
    """The context's stored messages by sequence (read once; not in ``to_json``)."""

    def to_json(self) -> dict[str, Any]:
        c = self.call
        return {
            "trace_id": self.trace_id,
            "position": self.position,
            "call_index": c.call_index,
            "agent_name": c.agent_name,
            "head": self.head,
            "head_row": self.head_row,
            "response_sequence": self.response_sequence,
            "error": c.error,
            "context": [i.to_json() for i in self.context],
            "context_recorded": self.context_recorded,
            "context_origin": self.context_origin.to_json(),
            "request_sha256": c.request_sha256,
            "goals": None
            if self.goals is None
            else {
                "focus": self.goals.focus,
                "goals": [
                    {"id": g.id, "title": g.title, "parent": g.parent, "status": g.status}
                    for g in self.goals.goals
                ],
            },
            "skills": None if self.skills is None else [_fields(s) for s in self.skills],
            "grants": None
            if self.grants is None
            else [{**_fields(g), "status": g.status} for g in self.grants],
            "compactions": [_fields(b) for b in self.compactions],
            "tokens": {
                **_fields(self.tokens),
                "run_totals": t.to_json() if (t := self.tokens.run_totals) is not None else None,
            },
            "unknown": list(self.unknown),
        }


def _fields(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


@dataclass
class Playback:
    """One trace indexed for scrubbing: open once, then ask for any call's state."""

    trace_id: str
    calls: list[CallRef]
    lines: dict[int, LineInfo]
    positions: dict[int, tuple[int, int]]
    main_segments: list[Segment]
    goal_events: list[GoalEvent]
    skills: list[SkillInjection]
    grants: list[Grant]
    compactions: list[CompactionEvent]
    window: int | None
    unknown: tuple[str, ...] = ()
    run_totals: RecordedTotals | None = None
    """The run's recorded totals, where they count tokens and no call records its own."""
    source: str = ""
    meta: Any = None
    """The trace's source and metadata (where a call's context comes from: ``origin``)."""
    _inputs: dict[int, int] = field(default_factory=dict)

    @classmethod
    def open(cls, reader: Reader, trace_id: str) -> Playback:
        trace = reader.trace(trace_id)
        calls = trace_calls(reader, trace_id)
        events = reader.goal_events(trace_id)
        skills = reader.skill_injections(trace_id)
        grants = reader.grants(trace_id)
        compactions = reader.compactions(trace_id)
        wanted: set[int] = {e.sequence for e in events}
        wanted |= {s.message_sequence for s in skills}
        wanted |= {c.head for c in calls if c.head is not None}
        for g in grants:
            wanted |= {
                s
                for s in (g.granted_at_sequence, g.message_sequence, g.revoked_at_sequence)
                if s is not None
            }
        wanted |= {c.at_sequence for c in compactions if c.at_sequence is not None}
        meta = trace.metadata or {}
        unknown = unrecorded(trace.source, meta, calls, events, skills, grants)
        return cls(
            trace_id,
            calls,
            reader.lines(trace_id),
            reader.positions(trace_id, sorted(wanted)),
            reader.segments(trace_id) if trace.head is not None else [],
            events,
            skills,
            grants,
            compactions,
            budget_of(trace.source, meta).window,
            unknown,
            recorded_totals(meta) if "usage_per_call" in unknown else None,
            trace.source,
            meta,
        )

    def __len__(self) -> int:
        return len(self.calls)

    # -- one call ---------------------------------------------------------------------------
    def state(self, reader: Reader, position: int) -> PlaybackState:
        if not 0 <= position < len(self.calls):
            raise IndexError(f"call position {position} out of 0..{len(self.calls) - 1}")
        call = self.calls[position]
        segs = self._segments(call.head)

        def seen(seq: int | None) -> bool:
            pos = self.positions.get(seq) if seq is not None else None
            return pos is not None and on_path(segs, *pos)

        origin = self.origin(call)
        if call.context is not None:  # an import's call may have its context rebuilt
            context = call.context
        else:
            context = current_items(reader, self.trace_id, call.head)[0]
        msgs = reader.messages(
            self.trace_id, [i.sequence for i in context if i.sequence is not None]
        )
        total, by = token_breakdown(View(context, msgs))
        plain = {i.sequence for i in context if i.sequence is not None and i.content is None}
        value = call.input_tokens
        self._inputs.setdefault(position, value if value is not None else total)
        return PlaybackState(
            self.trace_id,
            position,
            call,
            call.head,
            self._row(call.head),
            call.response_sequence,
            context,
            origin.recorded,
            origin,
            None if "goals" in self.unknown else self._goals(seen),
            None if "skills" in self.unknown else self._skills(seen, plain),
            None if "grants" in self.unknown else self._grants(seen, plain),
            self._boundaries(seen),
            self._tokens(reader, position, total, by),
            self.unknown,
            msgs,
        )

    def origin(self, call: CallRef) -> ContextOrigin:
        """Where the call's context comes from (``context_origin``)."""
        return context_origin(self.source, self.meta, call.params, call_recorded=call.recorded)

    def _segments(self, head: int | None) -> list[Segment]:
        pos = self.positions.get(head) if head is not None else None
        return path_segments(self.lines, *pos) if pos is not None else []

    def _row(self, head: int | None) -> int | None:
        pos = self.positions.get(head) if head is not None else None
        if pos is None or not on_path(self.main_segments, *pos):
            return None
        return pos[1]

    def _goals(self, seen: Any) -> GoalTree:
        return replay_goals(self.goal_events, lambda ev: seen(ev.sequence))

    def _skills(self, seen: Any, plain: set[int]) -> tuple[SkillAsOf, ...]:
        out = []
        for s in self.skills:
            if not seen(s.message_sequence):
                continue
            live = s.message_sequence in plain
            status = (
                ("re-injected" if s.reason == "reinject" else "present")
                if live
                else "compacted away"
            )
            out.append(SkillAsOf(s.skill, s.message_sequence, s.call_sequence, s.reason, status))
        return tuple(out)

    def _grants(self, seen: Any, plain: set[int]) -> tuple[GrantAsOf, ...]:
        out = []
        for g in self.grants:
            at = g.granted_at_sequence if g.granted_at_sequence is not None else g.message_sequence
            if not seen(at):
                continue
            revoked = g.revoked_at_sequence if seen(g.revoked_at_sequence) else None
            out.append(
                GrantAsOf(
                    g.id,
                    g.ref_id,
                    g.granted_by,
                    g.reason,
                    g.cost,
                    g.granted_at_sequence,
                    g.message_sequence,
                    revoked,
                    g.revoked_reason if revoked is not None else None,
                    g.message_sequence in plain,
                )
            )
        return tuple(out)

    def _boundaries(self, seen: Any) -> tuple[BoundaryAsOf, ...]:
        on = [c for c in self.compactions if c.at_sequence is None or seen(c.at_sequence)]
        out = []
        for n, c in enumerate(on):
            after = next(
                (
                    k.position
                    for k in self.calls
                    if c.at_sequence is not None and k.head is not None and k.head >= c.at_sequence
                ),
                None,
            )
            out.append(
                BoundaryAsOf(
                    c.id,
                    c.level,
                    c.trigger,
                    c.at_sequence,
                    c.tokens_before,
                    c.tokens_after,
                    len(c.removed),
                    after,
                    n == len(on) - 1,
                )
            )
        return tuple(out)

    def _tokens(
        self, reader: Reader, position: int, total: int, by: Mapping[str, int]
    ) -> TokensAsOf:
        call = self.calls[position]
        so_far = self.calls[: position + 1]
        cumulative = 0
        for k in range(position + 1):
            cumulative += self._input_of(reader, k)
        outputs = [c.output_tokens for c in so_far]
        known = [n for n in outputs if n is not None]
        return TokensAsOf(
            self._inputs[position],
            call.output_tokens,
            cumulative,
            sum(known) if known else None,
            dict(by),
            total,
            self.window,
            input_recorded=call.input_basis == "recorded",
            input_counted=call.counted_input_tokens,
            calls=len(so_far),
            inputs_counted=sum(1 for c in so_far if c.input_basis == "counted"),
            outputs_unknown=len(outputs) - len(known),
            run_totals=self.run_totals,
            output_open=call.output_open,
        )

    def _input_of(self, reader: Reader, position: int) -> int:
        if position not in self._inputs:
            call = self.calls[position]
            value = call.input_tokens
            if value is None:
                context = call.context
                if context is None:
                    context = current_items(reader, self.trace_id, call.head)[0]
                msgs = reader.messages(
                    self.trace_id, [i.sequence for i in context if i.sequence is not None]
                )
                value = token_breakdown(View(context, msgs))[0]
            self._inputs[position] = value
        return self._inputs[position]


def playback_state(reader: Reader, trace_id: str, position: int) -> PlaybackState:
    """One-off: index the trace and return call ``position``'s state."""
    return Playback.open(reader, trace_id).state(reader, position)
