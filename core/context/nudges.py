"""Runtime nudges (SPEC INJ-5, seed B 2): small monitors the run loop consults each step.

Each monitor is a plain dataclass: its fields are its whole state, so a paused or resumed
run saves it with ``to_state()`` and restores it with ``from_state()``. Each check returns
the ``Nudge`` to inject (or ``None``); ``Nudge.to_message()`` makes the stored message of
kind ``nudge`` or ``notice``.

Where the run loop calls them (docs/injection.md has the full step map):
- before a model call: ``NoticeQueue.drain``, ``TokenBudget.check(context_tokens)``,
  ``DiminishingReturns.check(reply_tokens)``, ``TodoNag.step(tool_names)``;
- before executing each tool call: ``DuplicateDetector.check(call)``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, TypeVar

from core.records import NewMessage, ToolCall, canonical_call

NudgeKind = Literal["nudge", "notice"]
BudgetLevel = Literal["near_soft", "over_soft", "over_hard"]
_LEVELS: tuple[BudgetLevel, ...] = ("near_soft", "over_soft", "over_hard")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Nudge:
    """One injected runtime message."""

    name: str
    """near_soft | over_soft | over_hard | diminishing_returns | todo_nag |
    background_task | duplicate_tool_call."""
    text: str
    kind: NudgeKind = "nudge"

    def to_message(self, agent_name: str = "main", goal_id: str | None = None) -> NewMessage:
        return NewMessage(
            "user",
            self.text,
            kind=self.kind,
            agent_name=agent_name,
            goal_id=goal_id,
            metadata={"nudge": self.name},
        )


class _State:
    """Save/restore for monitor dataclasses (JSON-safe dicts)."""

    def to_state(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload, no-any-return]

    @classmethod
    def from_state(cls: type[T], state: Mapping[str, Any]) -> T:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in state.items() if k in known})


# -- token budget ----------------------------------------------------------------------
@dataclass
class TokenBudget(_State):
    """Three-level budget nudge; only the highest level reached applies.

    ``check`` takes the context size the next call will send (provider-reported prompt
    tokens plus estimates since, TOK-2). A level's nudge is injected once when it is
    reached; if compaction brings the context back under it, it can fire again later.
    """

    soft_limit: int = 32_000
    hard_limit: int = 40_000
    near_ratio: float = 0.8
    sent_level: str | None = None

    def level(self, tokens: int) -> BudgetLevel | None:
        if tokens >= self.hard_limit:
            return "over_hard"
        if tokens >= self.soft_limit:
            return "over_soft"
        if tokens >= self.soft_limit * self.near_ratio:
            return "near_soft"
        return None

    def check(self, tokens: int) -> Nudge | None:
        level = self.level(tokens)
        rank, sent = _rank(level), _rank(self.sent_level)
        if rank < sent:
            self.sent_level = level  # back under a level (compaction): it may fire again
        if rank <= sent:
            return None
        self.sent_level = level
        assert level is not None
        return Nudge(level, self._text(level, tokens))

    def _text(self, level: BudgetLevel, tokens: int) -> str:
        used = f"{tokens:,} tokens used"
        if level == "near_soft":
            return (
                f"[Token budget] {used}, {self.near_ratio:.0%} of the soft limit "
                f"{self.soft_limit:,} reached. Keep the next steps focused; avoid large reads."
            )
        if level == "over_soft":
            return (
                f"[Token budget warning] {used}, over the soft limit {self.soft_limit:,}. "
                "Summarize your key findings soon and move towards the answer."
            )
        return (
            f"[Token budget exhausted] {used}, over the hard limit {self.hard_limit:,}. "
            "Stop calling tools: summarize and give your final answer now."
        )


def _rank(level: str | None) -> int:
    return _LEVELS.index(level) if level in _LEVELS else -1


# -- diminishing returns ----------------------------------------------------------------
@dataclass
class DiminishingReturns(_State):
    """Stop a run that keeps being continued without producing much (seed B 2.1).

    A *continuation* is a model reply without tool calls after which the run goes on
    anyway (a "keep going" prompt, pending todos). ``check(reply_tokens)`` is called once
    per continuation with the tokens of that reply. After at least ``min_continuations``
    continuations, two consecutive replies below ``min_delta`` trigger: the run must ask
    for a final answer without tools. Steps with tool calls are not continuations: a
    short ``goal``/``todo_write`` call is work, not a sign of spinning.
    """

    min_continuations: int = 3
    min_delta: int = 500
    continuations: int = 0
    recent: list[int] = field(default_factory=list)
    triggered: bool = False

    def check(self, reply_tokens: int) -> Nudge | None:
        self.continuations += 1
        self.recent = [*self.recent, reply_tokens][-2:]
        if self.triggered or self.continuations < self.min_continuations:
            return None
        if len(self.recent) == 2 and all(d < self.min_delta for d in self.recent):
            self.triggered = True
            return Nudge(
                "diminishing_returns",
                "[Diminishing returns] The last steps added little new information. "
                "Do not call more tools: give your final answer now from what you have.",
            )
        return None


# -- todo nag ----------------------------------------------------------------------------
@dataclass
class TodoNag(_State):
    """Remind the model to update its todo list after ``after`` steps without doing so."""

    after: int = 3
    tool: str = "todo_write"
    steps_without: int = 0

    def step(self, tool_names: Iterable[str]) -> Nudge | None:
        if self.tool in set(tool_names):
            self.steps_without = 0
            return None
        self.steps_without += 1
        if self.steps_without < self.after:
            return None
        self.steps_without = 0
        return Nudge(
            "todo_nag",
            f"[Reminder] {self.after} steps without updating the todo list. Call "
            f"{self.tool} to mark finished items and add what is next.",
        )


# -- background notices ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BackgroundNotice:
    task_id: str
    tool: str
    ok: bool
    summary: str

    def text(self) -> str:
        mark = "done" if self.ok else "FAILED"
        return f"[Background task {mark}] {self.tool} ({self.task_id}): {self.summary}"


class NoticeQueue:
    """Completion notices of background tasks, drained before each model call.

    ``push`` may be called from any thread (a worker finishing a slow download);
    ``drain`` returns everything pushed so far, oldest first, exactly once.
    """

    def __init__(self, pending: Iterable[BackgroundNotice] = ()) -> None:
        self._lock = threading.Lock()
        self._queue: deque[BackgroundNotice] = deque(pending)

    def push(self, notice: BackgroundNotice) -> None:
        with self._lock:
            self._queue.append(notice)

    def drain(self) -> list[Nudge]:
        with self._lock:
            items = list(self._queue)
            self._queue.clear()
        return [Nudge("background_task", n.text(), "notice") for n in items]

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)

    def to_state(self) -> list[dict[str, Any]]:
        with self._lock:
            return [asdict(n) for n in self._queue]

    @classmethod
    def from_state(cls, state: Iterable[Mapping[str, Any]]) -> NoticeQueue:
        return cls(BackgroundNotice(**dict(s)) for s in state)


# -- duplicate tool calls ------------------------------------------------------------------
def call_key(name: str, arguments: str) -> str:
    """Tool name plus canonical arguments (key order and spacing do not matter)."""
    return canonical_call(name, arguments)


@dataclass
class DuplicateDetector(_State):
    """The same tool with the same arguments ``threshold`` times in a row is not executed.

    ``check`` is called for every tool call in execution order (parallel calls of one
    message included); it returns an error text for the call that reaches the threshold
    and for each further repeat, and ``None`` otherwise.
    """

    threshold: int = 3
    last_key: str | None = None
    streak: int = 0
    detections: int = 0

    def check(self, call: ToolCall) -> str | None:
        key = call_key(call.name, call.arguments)
        self.streak = self.streak + 1 if key == self.last_key else 1
        self.last_key = key
        if self.streak < self.threshold:
            return None
        self.detections += 1
        return (
            f"Error: {call.name} was called {self.streak} times in a row with the same "
            "arguments; this call was not executed. Use the earlier result, change the "
            "arguments, or move on."
        )


# -- all monitors of one agent -----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PreCallNudges:
    """What to inject before the next model call, in order, and whether tools are off."""

    nudges: tuple[Nudge, ...]
    final_answer_without_tools: bool


@dataclass
class StepMonitors:
    """The INJ-5 monitors of one agent (each subagent has its own), saved as one state."""

    budget: TokenBudget = field(default_factory=TokenBudget)
    returns: DiminishingReturns = field(default_factory=DiminishingReturns)
    todo: TodoNag = field(default_factory=TodoNag)
    duplicates: DuplicateDetector = field(default_factory=DuplicateDetector)
    notices: NoticeQueue = field(default_factory=NoticeQueue)

    def before_model_call(
        self,
        context_tokens: int,
        last_step: tuple[int, Iterable[str]] | None = None,
    ) -> PreCallNudges:
        """Drain notices, then budget, todo and diminishing-returns checks.

        ``last_step`` is ``(tokens of the previous model reply, its tool names)``; ``None``
        on the first call of a turn (nothing to judge yet). A previous reply without tool
        calls is a continuation (``DiminishingReturns``).
        """
        out = list(self.notices.drain())
        budget = self.budget.check(context_tokens)
        if budget is not None:
            out.append(budget)
        stop = False
        if last_step is not None:
            reply_tokens, names = last_step
            tools = list(names)
            todo = self.todo.step(tools)
            if todo is not None:
                out.append(todo)
            dim = None if tools else self.returns.check(reply_tokens)
            if dim is not None:
                out.append(dim)
                stop = True
        return PreCallNudges(tuple(out), stop)

    def to_state(self) -> dict[str, Any]:
        return {
            "budget": self.budget.to_state(),
            "returns": self.returns.to_state(),
            "todo": self.todo.to_state(),
            "duplicates": self.duplicates.to_state(),
            "notices": self.notices.to_state(),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> StepMonitors:
        return cls(
            TokenBudget.from_state(state.get("budget", {})),
            DiminishingReturns.from_state(state.get("returns", {})),
            TodoNag.from_state(state.get("todo", {})),
            DuplicateDetector.from_state(state.get("duplicates", {})),
            NoticeQueue.from_state(state.get("notices", [])),
        )
