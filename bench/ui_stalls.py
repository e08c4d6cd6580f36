"""UI-thread stalls of the real window: open a store, switch traces, select messages.

A precise 5 ms timer on the UI thread records how late each tick comes; a late tick is a
stall (the loop could not answer input for that long). The window is driven by timer steps
inside ``app.exec()`` (as ``app/gui.py`` starts it, ``paint_first``), so every stall the
user would feel is seen. Prints one JSON object: the worst stall per phase (open: process
start to idle; switch: another trace to idle; select: message clicks to idle), and the
stalls over 50 ms with what the window was doing. Not a test (timings are the machine's):
``python -m bench.ui_stalls STORE [--trace ID] [--switch ID] [--why] [--shots DIR]
[--profile FILE]`` (docs/bench.md, "UI-thread stalls after open (hpanes)").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

T0 = time.perf_counter()
TICK_MS = 5
REPORT_MS = 50


class Stalls:
    """Lateness of a repeating timer, put down to the phase whose work delayed it: the
    first phase entered during the late interval (its work began there), else the
    current one."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self._phase = "start"
        self._entered: list[str] = []
        self.worst: dict[str, float] = {}
        self.big: list[dict[str, Any]] = []
        self.last = time.perf_counter()
        self.cpu = time.thread_time()
        """The UI thread's CPU time at the last tick: a stall with little of it was the
        thread waiting (for the GIL, for a core), not working."""
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    @property
    def phase(self) -> str:
        return self._phase

    @phase.setter
    def phase(self, name: str) -> None:
        self._phase = name
        self._entered.append(name)

    def tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        late_ms = 1000 * (now - self.last) - TICK_MS
        cpu_ms = 1000 * (cpu - self.cpu)
        self.last, self.cpu = now, cpu
        phase = self._entered[0] if self._entered else self._phase
        self._entered = []
        self.worst[phase] = max(self.worst.get(phase, 0.0), late_ms)
        if late_ms >= REPORT_MS:
            at = round(now - T0, 3)
            ms, cpu_used = round(late_ms, 1), round(cpu_ms, 1)
            self.big.append({"phase": phase, "at_s": at, "ms": ms, "cpu_ms": cpu_used})


def _label(window: Any, stalls: Stalls, method: str, phase: str) -> None:
    """Name the stalls of one of the window's start-up stages (``method``, when it has it);
    what follows it is "open: filling" (results arriving, first paints)."""
    run = getattr(window, method, None)
    if run is None:
        return

    def labelled(*args: Any) -> None:
        stalls.phase = f"{phase} {args[0]}" if args else phase
        run(*args)
        stalls.phase = "open: filling"

    setattr(window, method, labelled)


def _watch(stalls: Stalls) -> None:
    """A watchdog thread: while a tick is over 40 ms late, note where the UI thread is
    (its Python stack, innermost frames) and every gen-2 garbage collection's length."""
    import gc
    import threading
    import traceback

    main = threading.main_thread().ident
    gc_start: list[float] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            gc_start[:] = [time.perf_counter()]
        elif gc_start:
            ms = 1000 * (time.perf_counter() - gc_start[0])
            stalls.big.append({"gc2_ms": round(ms, 1), "at_s": round(time.perf_counter() - T0, 3)})

    gc.callbacks.append(on_gc)

    def watch() -> None:
        seen = -1.0
        while True:
            time.sleep(0.01)
            last = stalls.last
            if time.perf_counter() - last > 0.04 and last != seen:
                seen = last
                frame = sys._current_frames().get(main)  # a diagnostic
                stack = traceback.extract_stack(frame)[-6:] if frame is not None else []
                where = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in stack]
                stalls.big.append({"late_at_s": round(last - T0, 3), "ui_stack": where})

    threading.Thread(target=watch, daemon=True).start()


class Drive:
    """The steps of one run, each a callable returning whether it is done (else it is
    asked again 20 ms later); ``result`` collects the times."""

    def __init__(self, args: argparse.Namespace, stalls: Stalls) -> None:
        self.args, self.stalls = args, stalls
        self.result: dict[str, Any] = {}
        self.window: Any = None
        self.shots = Path(args.shots) if args.shots else None
        self.steps: list[Callable[[], bool]] = [self.open_window, self.rows_painted]
        self.steps += [self.panes_ready, self.settled("open"), self.idle_shot]
        for k in range(2):  # to another trace and back
            self.steps += [self.switch, self.settled(f"switch{k}")]
        for k in range(args.selects):
            self.steps += [self.select(k), self.settled(f"select{k}")]
        self.steps += [self.idle(2.0)]  # nothing to do: the machine's noise

    def shot(self, name: str) -> None:
        if self.shots is not None:
            self.shots.mkdir(parents=True, exist_ok=True)
            self.window.grab().save(str(self.shots / f"{name}.png"))

    def open_window(self) -> bool:
        import tempfile

        from app.gui import SCREENSHOT_SIZE, GuiOptions, make_window

        settings = str(Path(tempfile.mkdtemp()) / "s.ini")
        self.stalls.phase = "open: window"
        opts = GuiOptions(db=self.args.store, settings=settings, trace=self.args.trace)
        _app, self.window = make_window(opts)
        self.window.resize(*SCREENSHOT_SIZE)
        _label(self.window, self.stalls, "_build_panes", "open: panes started")
        _label(self.window, self.stalls, "_pane_step", "open: pane step")
        _label(self.window, self.stalls, "_panes_built", "open: panes connected")
        self.window.show()
        self.stalls.phase = "open: rows"
        return True

    def rows_painted(self) -> bool:
        w = self.window
        if not (w.timeline_built and w.timeline.source is not None) or w.timeline.loading:
            return False
        self.result["rows_s"] = round(time.perf_counter() - T0, 3)
        self.shot("after_rows")
        return True

    def panes_ready(self) -> bool:
        if not self.window.ready:
            return False
        self.result["panes_s"] = round(time.perf_counter() - T0, 3)
        return True

    def settled(self, phase: str) -> Callable[[], bool]:
        def check() -> bool:
            if not self.window.is_settled():
                return False
            self.result[f"{phase}_idle_s"] = round(time.perf_counter() - T0, 3)
            return True

        return check

    def idle(self, seconds: float) -> Callable[[], bool]:
        until: list[float] = []

        def wait() -> bool:
            if not until:
                self.stalls.phase = "idle (noise)"
                until.append(time.perf_counter() + seconds)
            return time.perf_counter() >= until[0]

        return wait

    def idle_shot(self) -> bool:
        self.shot("idle")
        return True

    def switch(self) -> bool:
        w = self.window
        self.stalls.phase = "bench"  # the bench's own read, not the window's
        others = [t.id for t in w.session.store.traces() if t.id != w.session.trace_id]
        self.stalls.phase = "switch"
        w.open_trace(self.args.switch or (others[0] if others else w.session.trace_id))
        return True

    def select(self, k: int) -> Callable[[], bool]:
        """Odd clicks on timeline rows spread over the path (most not on a loaded page),
        even ones as a pane's link does (``select_message``)."""

        def run() -> bool:
            self.stalls.phase = "select"
            w = self.window
            length = w.timeline.model.length
            if not length:
                return True
            at = min(length - 1, (2 * k + 1) * length // (2 * self.args.selects + 1))
            if k % 2:
                w.timeline.select_view_row(w.timeline.model.view_row_of(at) or 0)
            else:
                self.stalls.phase = "bench"
                row = w.timeline.model.path_row(at)  # the bench's own read
                self.stalls.phase = "select"
                if row is not None:
                    w.select_message(row.sequence)
            return True

        return run


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ui_stalls")
    parser.add_argument("store")
    parser.add_argument("--trace", help="the trace to open (default: the store's newest)")
    parser.add_argument("--switch", help="a trace to switch to (default: another one)")
    parser.add_argument("--selects", type=int, default=6, help="messages to click")
    parser.add_argument("--profile", help="write a cProfile of the whole run here")
    parser.add_argument("--why", action="store_true", help="sample the UI stack in stalls")
    parser.add_argument("--shots", help="folder for screenshots (after the rows, once idle)")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    profile = None
    if args.profile:
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    stalls = Stalls()
    if args.why:
        _watch(stalls)
    drive = Drive(args, stalls)

    def step() -> None:
        while drive.steps:
            if not drive.steps[0]():
                QTimer.singleShot(20, step)
                return
            drive.steps.pop(0)
        stalls.phase = "done"
        drive.window.close()
        app.quit()

    QTimer.singleShot(0, step)
    app.exec()
    if profile is not None:
        profile.disable()
        profile.dump_stats(args.profile)
    print(json.dumps(drive.result | {"worst_ms": _rounded(stalls.worst), "stalls": stalls.big}))
    return 0


def _rounded(worst: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in worst.items()}


if __name__ == "__main__":
    raise SystemExit(main())
