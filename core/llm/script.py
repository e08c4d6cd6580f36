"""Scripts for the scripted model, and how it reads progress from a context (SPEC LLM-2).

A script is an ordered list of steps: tool calls (one, or several in parallel), goal-tool
operations, and a final answer. The scripted model keeps no memory: for every request it
reads which steps are **visibly done** in the messages it was sent and performs the first
step that is not. So a step whose evidence a compaction removed is done again, and that
repeat is how lost context becomes measurable.

A step with label ``L`` is visibly done when either
1. every tool call of the step has a visible tool result: the model names its calls
   ``sc_<L>_<i>_<digest>`` and a ``tool`` message whose ``tool_call_id`` has that shape
   counts as the result of call ``i`` of ``L`` (the content does not matter, so a
   micro-compaction placeholder still counts); or
2. the marker ``[done L]`` appears in any visible text: message content (a summary, a
   GoalTree injection, a tool result) or the arguments of a visible tool call (a
   ``goal(done=…, summary=…)`` call lists the steps it covers, so goal compaction keeps
   them visible). ``done_marker(L)`` writes the marker; the scripted summarizer writes one
   per completed step, and the summary contract keeps such lines; or
3. every tool call of the step is listed as completed on a visible ``Done: <tool> <JSON
   arguments>`` line — what compaction placeholders write for the calls they remove
   (``core/context/compaction/facts.py``), the way a person reads "already done: …".

Labels are letters, digits and dots (``S01``, ``2.3``): no underscores, no spaces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.records import canonical_call

LABEL_RE = re.compile(r"^[A-Za-z0-9.]+$")
CALL_ID_RE = re.compile(r"^sc_([A-Za-z0-9.]+)_(\d+)_([0-9a-f]{8})$")
DONE_RE = re.compile(r"\[done ([A-Za-z0-9.]+)\]")
DONE_CALL_RE = re.compile(r"^Done: (\S+ .*)$", re.M)


def done_marker(label: str) -> str:
    return f"[done {label}]"


def call_id(label: str, index: int, digest: str) -> str:
    """The id the scripted model gives call ``index`` of step ``label``."""
    return f"sc_{label}_{index}_{digest[:8]}"


@dataclass(frozen=True)
class ScriptCall:
    """One tool call of a step; ``arguments`` is the JSON text sent to the tool."""

    name: str
    arguments: str = "{}"

    @staticmethod
    def of(name: str, arguments: Mapping[str, Any] | None = None) -> ScriptCall:
        return ScriptCall(name, json.dumps(dict(arguments or {}), ensure_ascii=False))


@dataclass(frozen=True)
class Step:
    """One step of a script: tool calls (done when all have results), or a final answer."""

    label: str
    calls: tuple[ScriptCall, ...] = ()
    text: str = ""
    """What the assistant says with the calls (its "thought"), or the final answer."""

    @property
    def is_final(self) -> bool:
        return not self.calls

    @staticmethod
    def tool(label: str, name: str, text: str = "", **arguments: Any) -> Step:
        return Step(label, (ScriptCall.of(name, arguments),), text)

    @staticmethod
    def goal(label: str, text: str = "", **arguments: Any) -> Step:
        """A ``goal`` tool operation (``add``, ``under``, ``focus``, ``done``, …)."""
        return Step.tool(label, "goal", text, **arguments)

    @staticmethod
    def goal_done(
        label: str, goal: str, summary: str, covers: Iterable[str] = (), text: str = ""
    ) -> Step:
        """``goal(done=goal, summary=…)`` whose summary carries ``[done L]`` for ``covers``,
        so the covered steps stay visibly done after goal compaction drops their results."""
        marks = " ".join(done_marker(c) for c in covers)
        return Step.goal(label, text, done=goal, summary=f"{summary} {marks}".strip())

    @staticmethod
    def final(label: str, text: str) -> Step:
        return Step(label, (), text)


@dataclass(frozen=True)
class Progress:
    """What a context shows as done."""

    results: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """Label → indices of its calls whose result is visible."""
    called: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """Label → indices of its calls visible in assistant messages."""
    marked: frozenset[str] = frozenset()
    """Labels with a visible ``[done L]`` marker."""
    marker_lines: Mapping[str, str] = field(default_factory=dict)
    """Label → the text after its first visible marker (on the same line)."""
    done_calls: frozenset[str] = frozenset()
    """``<tool> <canonical JSON arguments>`` of calls listed on visible ``Done:`` lines."""

    def step_done(self, step: Step) -> bool:
        if step.label in self.marked:
            return True
        if step.is_final:
            return False
        if set(range(len(step.calls))) <= set(self.results.get(step.label, ())):
            return True
        return bool(self.done_calls) and all(
            canonical_call(c.name, c.arguments) in self.done_calls for c in step.calls
        )

    def done_labels(self) -> list[str]:
        """Labels visibly done without knowing the script: marked, or every visible call of
        the label has its result. In first-seen order."""
        out: dict[str, None] = {}
        for label in self.marked:
            out[label] = None
        for label, calls in self.called.items():
            if calls and calls <= self.results.get(label, frozenset()):
                out[label] = None
        order = list(self.called) + sorted(self.marked)
        return sorted(out, key=order.index)


@dataclass(frozen=True)
class Script:
    """An ordered list of steps. ``match``: choose this script when the first system message
    contains this text (so a subagent can have its own script)."""

    steps: tuple[Step, ...]
    name: str = "main"
    match: str | None = None

    def __post_init__(self) -> None:
        labels = [s.label for s in self.steps]
        for label in labels:
            if not LABEL_RE.match(label):
                raise ValueError(f"script {self.name}: bad step label {label!r}")
        if len(set(labels)) != len(labels):
            raise ValueError(f"script {self.name}: step labels repeat")
        if any(s.is_final for s in self.steps[:-1]):
            raise ValueError(f"script {self.name}: only the last step may be final")

    def next_step(self, progress: Progress) -> Step | None:
        """The first step not visibly done; ``None`` when every step is."""
        for step in self.steps:
            if not progress.step_done(step):
                return step
        return None

    @property
    def final(self) -> Step | None:
        return self.steps[-1] if self.steps and self.steps[-1].is_final else None


def read_progress(messages: Sequence[Mapping[str, Any]]) -> Progress:
    """Progress visible in an OpenAI-shape message list (see the module docstring)."""
    results: dict[str, set[int]] = {}
    called: dict[str, set[int]] = {}
    marked: dict[str, str] = {}
    done_calls: set[str] = set()
    for m in messages:
        text = message_text(m)
        _scan_markers(text, marked)
        if "Done: " in text:
            done_calls.update(DONE_CALL_RE.findall(text))
        if m.get("role") == "tool":
            parsed = CALL_ID_RE.match(str(m.get("tool_call_id") or ""))
            if parsed:
                results.setdefault(parsed.group(1), set()).add(int(parsed.group(2)))
        for call in m.get("tool_calls") or ():
            fn = call.get("function") or {}
            _scan_markers(str(fn.get("arguments") or ""), marked)
            parsed = CALL_ID_RE.match(str(call.get("id") or ""))
            if parsed:
                called.setdefault(parsed.group(1), set()).add(int(parsed.group(2)))
    return Progress(
        results={k: frozenset(v) for k, v in results.items()},
        called={k: frozenset(v) for k, v in called.items()},
        marked=frozenset(marked),
        marker_lines=marked,
        done_calls=frozenset(done_calls),
    )


def message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _scan_markers(text: str, into: dict[str, str]) -> None:
    if "[done " not in text:
        return
    for match in DONE_RE.finditer(text):
        rest = text[match.end() :].split("\n", 1)[0]
        rest = DONE_RE.split(rest, 1)[0] if DONE_RE.search(rest) else rest
        into.setdefault(match.group(1), rest.strip().rstrip('"}\\').strip()[:160])
