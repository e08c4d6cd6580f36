"""What the Run controls say (UI-6): which of Run, Step, Pause and Stop can act, why not
(their tooltip) and the one status line, computed from the live run's state by one pure
function, so the window only shows the value and tests can check it without Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.run.state import Phase

if TYPE_CHECKING:
    from core.run.live import LiveSupport

Busy = Literal["opening", "step", "run", "closing"] | None
FINISHED_TIP = (
    "The turn is finished: rewind to continue, or start a new demo run (Run → New demo run…)"
)


@dataclass(frozen=True)
class RunState:
    """A snapshot of the live run of the shown trace (``ui/run_controller.py``)."""

    support: LiveSupport | None
    """Whether the trace can run and against what (``None``: no trace shown)."""
    source: str = "these"
    phase: Phase = Phase.IDLE
    next_text: str = ""
    """What the next Step does."""
    busy: Busy = None
    intent: Literal["step", "run"] = "step"
    pausing: bool = False
    """Pause was pressed; the run stops at the next step boundary."""
    last_stop: str = ""
    """Why the last Run returned: done, paused, cancelled, error."""
    has_task: bool = False
    """"Run a task…" gave this trace an endpoint and its first turn's task."""
    activity: str = ""
    """The run's last line about what it is doing."""


@dataclass(frozen=True)
class RunStatus:
    """What the window shows: Run and Step act together (``can_step``), Rewind and
    Compact need ``idle``."""

    can_step: bool
    can_pause: bool
    can_stop: bool
    idle: bool
    why: str
    """Why Run/Step cannot act, or what they run against."""
    line: str
    """The status bar's run line."""

    def tip(self, what: str) -> str:
        """The tooltip of Run or Step (``what`` says what it does)."""
        return f"{what} — {self.why}" if self.can_step else self.why


def run_status(s: RunState) -> RunStatus:
    idle = s.busy is None
    runnable = s.support is not None and s.support.runnable
    return RunStatus(
        can_step=runnable and idle and _steppable(s),
        can_pause=s.intent == "run" and s.busy in ("opening", "run") and not s.pausing,
        can_stop=s.busy in ("opening", "step", "run"),
        idle=idle,
        why=_why(s),
        line=_line(s),
    )


def _steppable(s: RunState) -> bool:
    if s.phase is Phase.DONE:
        return False
    if s.phase is not Phase.IDLE or s.has_task:
        return True
    return s.support is not None and s.support.kind == "demo"


def _why(s: RunState) -> str:
    support = s.support
    if support is None:
        return "Open a trace first"
    if not support.runnable:
        return support.detail[0].upper() + support.detail[1:]
    if s.phase is Phase.DONE:
        return FINISHED_TIP
    if s.phase is Phase.IDLE and support.kind != "demo" and not s.has_task:
        return "No turn is open on this trace: start one with `ctxlens run --trace`"
    if s.busy is not None:
        return f"Busy: {s.busy}"
    return f"Runs against {support.detail}"


def _line(s: RunState) -> str:
    support = s.support
    if support is None:
        return ""
    if support.kind == "unconfigured":
        return "Run: no model endpoint configured (CTXLENS_BASE_URL)"
    if support.kind == "nested":
        return "Run: a delegated child runs inside its root's run (open the root)"
    if not support.runnable:
        return f"Run: {s.source} traces cannot run · New demo run: Ctrl+Shift+N"
    if s.busy == "opening":
        return "Run: starting the model…"
    if s.busy is not None:
        return ("Running" if s.busy == "run" else "Step") + ": " + s.activity
    if s.phase is Phase.DONE:
        stop = f" ({s.last_stop})" if s.last_stop not in ("", "done") else ""
        return "Run: the turn is finished" + stop
    paused = "Paused · " if s.last_stop == "paused" else ""
    return f"{paused}Step: {s.next_text}"
