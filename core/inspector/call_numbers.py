"""One numbering of a trace's model calls, computed once for every pane (issue 17).

After a rewind a trace holds calls of two kinds: those of the current path (the main path
and the side branches forking from it, ``core/replay/calls.py:live_calls``) and those the
rewind left on the abandoned branch. The current path's calls are numbered 0..n-1 in
order; an abandoned call has no number and is named as such. The scrubber ("call 41 of
0–126") and the Context pane's call box read these numbers, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.agents import is_main_agent
from core.inspector.wording import counted
from core.replay.calls import CallRef, live_calls, recorded_calls
from core.store.reader import Reader


@dataclass(frozen=True, slots=True)
class CallNumber:
    call: CallRef
    number: int | None
    """Its place among the current path's calls; ``None``: abandoned by a rewind."""

    @property
    def abandoned(self) -> bool:
        return self.number is None


def same_agent(a: CallRef, b: CallRef) -> bool:
    """Whether two calls are one agent's (its name and the branch it calls on)."""
    return a.agent_name == b.agent_name and a.branch_type == b.branch_type


ABANDONED = "abandoned by a rewind"
"""How a call (or message) the current path no longer holds is named."""

#: How a call made on a side branch is named, by the branch's type.
BRANCH_ROLES = {
    "compression": "compaction summarizer",
    "subagent": "subagent",
    "knowledge_eval": "knowledge check",
    "reflection": "reflection",
}


def agent_role(call: CallRef) -> str:
    """Who made a call that is not the main agent's own: ``compaction summarizer``,
    ``subagent claude-code-guide``; ``""`` for the main agent (``core/agents.py:is_main_agent``:
    no side branch, whatever its name: any-agent's ``any_agent`` too). A call box or a label
    that showed only "call 102 of 0–155" made a compaction's summarizer read as a main call."""
    if is_main_agent(call):
        return ""
    name, branch = call.agent_name, str(call.branch_type)
    if branch == "compression":
        return BRANCH_ROLES["compression"]
    role = BRANCH_ROLES.get(branch, branch.replace("_", " "))
    return f"{role} {name}" if name and name != "main" else role


def number_range(total: int) -> str:
    """The numbers ``total`` calls have: ``0–126``; ``0`` for one call."""
    return "0" if total <= 1 else f"0–{total - 1}"


@dataclass(frozen=True)
class CallNumbering:
    calls: tuple[CallNumber, ...]
    """In the trace's call order (``CallRef.position``)."""
    total: int
    """Calls on the current path."""

    @classmethod
    def of(cls, reader: Reader, trace_id: str, calls: list[CallRef]) -> CallNumbering:
        live = {c.position for c in live_calls(reader, trace_id, calls)}
        out, n = [], 0
        for c in calls:
            out.append(CallNumber(c, n if c.position in live else None))
            n += c.position in live
        return cls(tuple(out), n)

    @property
    def abandoned(self) -> int:
        return len(self.calls) - self.total

    def by_index(self, call_index: int | None) -> CallNumber | None:
        return next((n for n in self.calls if n.call.call_index == call_index), None)

    def name(self, position: int) -> str:
        """ "call 41 of 0–126" on the current path, "a call abandoned by a rewind" off it.

        The numbers start at 0 (as ``--call N``, the comparison's rows and "first differs
        at call 16" do); "call 155 / 156" for the last of 156 read as if one were missing
        (screenshot review), so the label names the range, not the count."""
        number = self.calls[position].number
        if number is None:
            return f"a call {ABANDONED}"
        return f"call {number} of {number_range(self.total)}"

    def short(self, position: int) -> str:
        """ "call 41" (the diff's labels), "call 102 (compaction summarizer)" for a call the
        main agent did not make, "an abandoned call"."""
        number = self.calls[position].number
        if number is None:
            return "an abandoned call"
        role = agent_role(self.calls[position].call)
        return f"call {number}" + (f" ({role})" if role else "")

    def titled(self, position: int) -> str:
        """``name`` and who made the call: "call 102 of 0–155 — compaction summarizer" (the
        main agent's calls: the name alone)."""
        role = agent_role(self.calls[position].call)
        return self.name(position) + (f" — {role}" if role else "")

    def current_main(self) -> list[int]:
        """Positions of the main agent's calls on the current path (the scrubber's stops;
        every current call when the main agent made none)."""
        current = [n.call for n in self.calls if n.number is not None]
        return [c.position for c in current if is_main_agent(c)] or [c.position for c in current]

    def next_of(self, position: int) -> CallNumber | None:
        """The following call of the same kind (current path, or abandoned branch) by the
        same agent: the main agent's next call, a subagent's own next one (a diff between
        two agents' contexts said "9 entered, 0 kept" of contexts that never met)."""
        me = self.calls[position]
        return next(
            (
                n
                for n in self.calls[position + 1 :]
                if n.abandoned == me.abandoned and same_agent(n.call, me.call)
            ),
            None,
        )

    def last_current(self) -> CallNumber | None:
        """The current path's last call of the main agent (the one the next call follows;
        the last call of any agent where the main agent made none)."""
        current = [n for n in self.calls if not n.abandoned]
        return next((n for n in reversed(current) if is_main_agent(n.call)), None) or (
            current[-1] if current else None
        )

    def abandoned_note(self) -> str:
        """What the scrubber says about the calls it does not stop at ("" when none)."""
        k = self.abandoned
        if not k:
            return ""
        return f"{k:,} call{'s' if k != 1 else ''} {ABANDONED}: not played back"


def recorded_numbering(reader: Reader, trace_id: str) -> CallNumbering:
    """The numbering of the recorded calls only: what the Context pane lists and reports
    on. It equals the scrubber's (over ``trace_calls``) for a trace that records its calls,
    and is empty for one that does not, without deriving a call per assistant message
    (500,000 for a 1M-message trace: minutes of a worker holding the GIL for a list
    nobody shows)."""
    return CallNumbering.of(reader, trace_id, recorded_calls(reader, trace_id))


@dataclass(frozen=True, slots=True)
class CallChoice:
    """One entry of the Context pane's call box."""

    call_index: int | None
    label: str
    abandoned: bool
    tip: str


def call_choices(reader: Reader, trace_id: str) -> list[CallChoice]:
    """The recorded calls for the call box: the current path's in order, then those a
    rewind abandoned (labelled so), each numbered as the scrubber numbers it."""
    numbering = recorded_numbering(reader, trace_id)
    ordered = sorted(numbering.calls, key=lambda n: n.abandoned)
    return [_choice(numbering, n) for n in ordered if n.call.recorded]


def _choice(numbering: CallNumbering, n: CallNumber) -> CallChoice:
    c = n.call
    prompt = c.usage.get("prompt_tokens") if isinstance(c.usage, dict) else None
    tok = f", {prompt:,} prompt tok" if isinstance(prompt, int) else ""
    items = counted(len(c.context or ()), "item")
    name = numbering.name(c.position)
    role = agent_role(c)
    who = f"{role}, " if role else ""
    label = f"{name[:1].upper()}{name[1:]} — {who}{c.model or 'model not recorded'}, {items}{tok}"
    tip = f"Recorded as llm_calls #{c.call_index}"
    if n.abandoned:
        tip += f"; on the branch a rewind left (head #{c.head}), not on the current path"
    return CallChoice(c.call_index, label, n.abandoned, tip)
