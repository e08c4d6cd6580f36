"""The Run controls' status (``core/run/status.py:run_status``) is one value computed from
the live run's state: what may act, why not, and the status line."""

from __future__ import annotations

from core.run.live import LiveSupport
from core.run.state import Phase
from core.run.status import FINISHED_TIP, RunState, run_status

DEMO = LiveSupport("demo", "the demo's scripted model, served on 127.0.0.1")
FOREIGN = LiveSupport("foreign", "claude_code traces cannot be run: not recorded here")
RUN = LiveSupport("endpoint", "model m at http://127.0.0.1:9/v1")


def test_no_trace_nothing_acts_and_nothing_is_said() -> None:
    s = run_status(RunState(None))
    assert (s.can_step, s.can_pause, s.can_stop, s.idle) == (False, False, False, True)
    assert s.why == "Open a trace first" and s.line == ""


def test_a_fresh_demo_trace_can_step_and_says_against_what() -> None:
    s = run_status(RunState(DEMO, "ctxlens", next_text="open the turn"))
    assert s.can_step and s.idle and not s.can_pause
    assert s.why == f"Runs against {DEMO.detail}" and s.line == "Step: open the turn"
    assert s.tip("One model call or one tool") == f"One model call or one tool — {s.why}"


def test_a_foreign_trace_cannot_run_and_points_to_a_new_demo_run() -> None:
    s = run_status(RunState(FOREIGN, "claude_code"))
    assert not s.can_step and s.why.startswith("Claude_code traces cannot be run")
    assert s.line == "Run: claude_code traces cannot run · New demo run: Ctrl+Shift+N"
    assert s.tip("Run") == s.why


def test_an_endpoint_trace_without_a_turn_needs_one_unless_a_task_is_set() -> None:
    idle = run_status(RunState(RUN, "ctxlens"))
    assert not idle.can_step and "ctxlens run --trace" in idle.why
    assert run_status(RunState(RUN, "ctxlens", has_task=True)).can_step


def test_running_pausing_and_finished() -> None:
    running = run_status(RunState(DEMO, phase=Phase.MODEL, busy="run", intent="run",
                                  activity="model call 3"))  # fmt: skip
    assert running.can_pause and running.can_stop and not running.can_step
    assert running.line == "Running: model call 3" and running.why == "Busy: run"
    pausing = run_status(RunState(DEMO, phase=Phase.MODEL, busy="run", intent="run",
                                  pausing=True))  # fmt: skip
    assert not pausing.can_pause and pausing.can_stop
    done = run_status(RunState(DEMO, phase=Phase.DONE, last_stop="paused"))
    assert not done.can_step and done.why == FINISHED_TIP
    assert done.line == "Run: the turn is finished (paused)"
    paused = run_status(RunState(DEMO, phase=Phase.MODEL, last_stop="paused", next_text="x"))
    assert paused.line == "Paused · Step: x"
