"""UI-thread stalls of the real window: open a store, switch traces, select messages.

A precise 5 ms timer on the UI thread records how late each tick comes; a late tick is a
stall (the loop could not answer input for that long). The window is driven by timer steps
inside ``app.exec()`` (as ``app/gui.py`` starts it, ``paint_first``), so every stall the
user would feel is seen. Prints one JSON object: the worst stall per phase (open: process
start to idle; switch: another trace to idle; select: message clicks to idle; then the
other actions a user takes, ``ACTIONS``: typing a search and stepping its matches, the
role/kind filters and "Only matches", a goal filter, the playback slider and play, the
Context pane's call box, the Compact dialog's preview, the Import dialog, the trace list's
filter box and sort, Compare), and the stalls over 50 ms with what the window was doing.
Not a test (timings are the machine's): ``python -m bench.ui_stalls STORE [--trace ID]
[--switch ID] [--actions search,filters,…|none] [--why] [--shots DIR] [--profile FILE]``
(docs/bench.md, "UI-thread stalls after open (hpanes)" and "UI-thread stalls of the
user's actions").
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
ACTIONS = ("search", "filters", "goal", "context", "compact", "import", "traces", "compare",
           "playback")  # fmt: skip
"""The actions run after the selections (``--actions``), in this order (playback last: a
frame of a long trace without recorded input tokens may compute for minutes)."""


class Stalls:
    """Lateness of a repeating timer, put down to the phase whose work delayed it: the
    first phase entered during the late interval (its work began there), else the
    current one."""

    def __init__(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self._phase = "start"
        self.verbose = False
        """Print each phase as it starts (``--why``: where a run hangs, too)."""
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
        if self.verbose and name != self._phase:
            print(f"{time.perf_counter() - T0:8.3f} {name}", file=sys.stderr, flush=True)
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
                frames = sys._current_frames()  # a diagnostic
                frame = frames.get(main)
                stack = traceback.extract_stack(frame)[-6:] if frame is not None else []
                where = [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in stack]
                # the other threads' innermost frames: who holds the GIL when the UI
                # thread, doing little itself, waits
                others = [
                    [f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in
                     traceback.extract_stack(fr)[-4:]]
                    for ident, fr in frames.items()
                    if ident not in (main, threading.get_ident())
                ]  # fmt: skip
                stalls.big.append(
                    {"late_at_s": round(last - T0, 3), "ui_stack": where, "workers": others}
                )

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
        chosen = [] if args.actions == "none" else args.actions.split(",")
        for name in ACTIONS:
            if name in chosen:
                self.steps += getattr(self, f"act_{name}")()
        self.steps += [self.idle(2.0)]  # nothing to do: the machine's noise

    def shot(self, name: str, widget: Any = None) -> None:
        """Save a screenshot; the grab's own stall is the bench's, not the phase's."""
        if self.shots is not None:
            phase, self.stalls.phase = self.stalls.phase, "bench"
            self.shots.mkdir(parents=True, exist_ok=True)
            (widget or self.window).grab().save(str(self.shots / f"{name}.png"))
            self.stalls.phase = phase

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

    def settled(self, phase: str, limited: bool = False) -> Callable[[], bool]:
        """Wait for the window to be idle; an action's wait gives up after
        ``--settle-timeout`` s (``<phase>_timeout``) and cancels the work, as Esc does."""
        start: list[float] = []

        def check() -> bool:
            if not start:
                start.append(time.perf_counter())
            late = time.perf_counter() - start[0] > self.args.settle_timeout
            if not self.window.is_settled():
                if not (late and limited):
                    return False
                self.result[f"{phase}_timeout"] = sorted(self.window.runner.labels())
                self.window.cancel_work()
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

    # -- the user's actions (each a list of steps; a phase per action, "<action>: <part>")
    def do(self, phase: str, fn: Callable[[], object]) -> Callable[[], bool]:
        """A step entering ``phase`` and doing ``fn`` (once), then letting the loop run
        30 ms (the paints it caused are its phase's, whatever follows)."""
        after: list[float] = []

        def run() -> bool:
            if not after:
                self.stalls.phase = phase
                fn()
                after.append(time.perf_counter() + 0.03)
                return False
            return time.perf_counter() >= after[0]

        return run

    def done(self, phase: str) -> Callable[[], bool]:
        """An action's wait for idle (it gives up after ``--settle-timeout``)."""
        return self.settled(phase, limited=True)

    def wait(self, ms: int) -> Callable[[], bool]:
        """A step letting the loop run ``ms`` (a user's pace between keys, drags)."""
        until: list[float] = []

        def check() -> bool:
            if not until:
                until.append(time.perf_counter() + ms / 1000)
            return time.perf_counter() >= until[0]

        return check

    def until(self, name: str, done: Callable[[], bool]) -> Callable[[], bool]:
        """Wait (at most 120 s) for ``done``; the time it took goes to ``result``."""
        start: list[float] = []

        def check() -> bool:
            if not start:
                start.append(time.perf_counter())
            waited = time.perf_counter() - start[0]
            if not done() and waited < 120:
                return False
            self.result[f"{name}_s"] = round(waited, 3)
            return True

        return check

    def act_search(self) -> list[Callable[[], bool]]:
        """Type a query key by key (as a user does: nothing runs until Return), press
        Return, then step through the matches (F3) and back."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        box = lambda: self.window.timeline.search_box  # noqa: E731
        steps: list[Callable[[], bool]] = [self.do("search: type", lambda: box().setFocus())]
        for ch in self.args.query:
            steps += [self.do("search: type", lambda ch=ch: QTest.keyClicks(box(), ch)),
                      self.wait(60)]  # fmt: skip
        steps += [self.do("search: run", lambda: QTest.keyClick(box(), Qt.Key.Key_Return)),
                  self.done("search"), self.shot_step("search")]  # fmt: skip
        for d in (1, 1, 1, 1, -1, -1):
            step = lambda d=d: self.window.timeline.step_match(d)  # noqa: E731
            steps += [self.do("search: step", step), self.done("search_step")]
        return steps

    def act_filters(self) -> list[Callable[[], bool]]:
        """The role and kind filters (each searches), "Only matches" on and off, then
        everything back to none."""
        t = lambda: self.window.timeline  # noqa: E731
        return [
            self.do("filter: role", lambda: t().role_filter.setCurrentIndex(
                max(0, t().role_filter.findData("tool")))),
            self.done("filter_role"),
            self.do("filter: kind", lambda: t().kind_filter.setCurrentIndex(1)),
            self.done("filter_kind"),
            self.do("filter: only", lambda: t().only_matches.setChecked(True)),
            self.done("filter_only_on"), self.shot_step("only_matches"),
            self.do("filter: only", lambda: t().only_matches.setChecked(False)),
            self.done("filter_only_off"),
            self.do("filter: clear", lambda: (t().kind_filter.setCurrentIndex(0),
                                               t().role_filter.setCurrentIndex(0),
                                               t().search_box.clear(), t().run_search())),
            self.done("filter_clear"),
        ]  # fmt: skip

    def act_goal(self) -> list[Callable[[], bool]]:
        """Click a goal in the outline (it filters the timeline), then "Show all"."""
        g = lambda: self.window.goals  # noqa: E731

        def pick() -> None:
            nodes = g().model.nodes
            if nodes:
                g().select_goal(nodes[len(nodes) // 2].id)

        return [
            self.do("goal: select", pick), self.done("goal"), self.shot_step("goal"),
            self.do("goal: clear", lambda: g().select_goal(None)), self.done("goal_clear"),
        ]  # fmt: skip

    def act_playback(self) -> list[Callable[[], bool]]:
        """Index the calls (a long trace's link), drag the slider across them, release,
        then play at the fastest speed for 3 s, pause, and back to live."""
        pb = lambda: self.window.replay.playback  # noqa: E731
        bar = lambda: self.window.replay.bar  # noqa: E731

        def index() -> None:
            if pb().frames is None:
                bar()._index_asked()

        def frames() -> bool:
            return pb().frames is not None or not self.window.runner.busy

        steps = [self.do("playback: index", index), self.until("playback_index", frames),
                 self.done("playback_indexed")]  # fmt: skip
        steps.append(self.do("playback: drag", lambda: bar().slider.setSliderDown(True)))
        for k in range(12):

            def move(k: int = k) -> None:
                s = bar().slider
                s.setValue(s.minimum() + (s.maximum() - s.minimum()) * k // 11)

            steps += [self.do("playback: drag", move), self.wait(50)]
        steps += [self.do("playback: drag", lambda: bar().slider.setSliderDown(False)),
                  self.done("playback_drag"), self.shot_step("playback")]  # fmt: skip

        def play() -> None:
            bar().speed.setCurrentIndex(bar().speed.count() - 1)
            pb().scrub(0)
            pb().play()

        steps += [self.do("playback: play", play), self.wait(3000),
                  self.do("playback: pause", lambda: pb().pause()), self.done("playback_play"),
                  self.do("playback: live", lambda: pb().go_live()),
                  self.done("playback_live")]  # fmt: skip
        return steps

    def act_context(self) -> list[Callable[[], bool]]:
        """Choose calls in the Context pane's box (as a click does: ``activated``)."""
        box = lambda: self.window.context.calls  # noqa: E731

        def choose(frac: float) -> Callable[[], None]:
            def run() -> None:
                n = box().count()
                if n > 1:
                    i = max(1, min(n - 1, int(frac * n)))
                    box().setCurrentIndex(i)
                    box().activated.emit(i)

            return run

        steps: list[Callable[[], bool]] = []
        for k, frac in enumerate((0.5, 0.1, 0.9)):
            steps += [self.do("context: call", choose(frac)), self.done(f"context{k}")]
        steps += [self.shot_step("context"), self.do("context: call", choose(0.0)),
                  self.do("context: live", lambda: self.window.replay.playback.go_live()),
                  self.done("context_live")]  # fmt: skip
        return steps

    def act_compact(self) -> list[Callable[[], bool]]:
        """Open the Compact dialog (its preview runs), then close it."""
        w = lambda: self.window  # noqa: E731

        def close() -> None:
            if w().compact_dialog is not None:
                w().compact_dialog.reject()

        return [self.do("compact: open", lambda: w().show_compact()), self.done("compact"),
                self.dialog_shot("compact", lambda: w().compact_dialog),
                self.do("compact: close", close), self.done("compact_closed")]  # fmt: skip

    def act_import(self) -> list[Callable[[], bool]]:
        """Open the Import dialog (File → Import traces…), leave it 0.5 s, cancel it."""
        w = lambda: self.window  # noqa: E731

        def close() -> None:
            if w().file_dialog is not None:
                w().file_dialog.reject()

        return [self.do("import: open", lambda: w().choose_import()), self.wait(500),
                self.dialog_shot("import", lambda: w().file_dialog),
                self.do("import: close", close), self.done("import")]  # fmt: skip

    def act_traces(self) -> list[Callable[[], bool]]:
        """Type into the trace list's filter box key by key, clear it; each sort order."""
        from PySide6.QtTest import QTest

        t = lambda: self.window.traces  # noqa: E731
        steps: list[Callable[[], bool]] = []
        for ch in self.args.list_query:
            key = lambda ch=ch: QTest.keyClicks(t().filters.text, ch)  # noqa: E731
            steps += [self.do("traces: filter", key),
                      self.wait(60)]  # fmt: skip
        steps += [self.done("traces_filter"),
                  self.do("traces: filter", lambda: t().filters.text.clear()),
                  self.done("traces_filter_clear")]  # fmt: skip
        for k in (1, 2, 3, 0):
            sort = lambda k=k: t().sort.setCurrentIndex(min(k, t().sort.count() - 1))  # noqa: E731
            steps += [self.do("traces: sort", sort), self.done(f"traces_sort{k}")]
        return steps

    def act_compare(self) -> list[Callable[[], bool]]:
        """Compare two traces (the shown one and another, or itself in a one-trace store)
        as the trace list's Compare button does; then close the window."""
        w = lambda: self.window  # noqa: E731

        def open_() -> None:
            ids = [t.id for t in w().traces.model.records]
            a = w().session.trace_id
            b = next((i for i in ids if i != a), a)
            w().replay.open_compare(a, b)

        def close() -> None:
            if w().replay.compare_window is not None:
                w().replay.compare_window.close()

        return [self.do("compare: open", open_), self.done("compare"),
                self.dialog_shot("compare", lambda: w().replay.compare_window),
                self.do("compare: close", close), self.done("compare_closed")]  # fmt: skip

    def shot_step(self, name: str) -> Callable[[], bool]:
        def run() -> bool:
            self.shot(name)
            return True

        return run

    def dialog_shot(self, name: str, widget: Callable[[], Any]) -> Callable[[], bool]:
        def run() -> bool:
            wid = widget()
            if wid is not None:
                self.shot(name, wid)
            return True

        return run

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
    parser.add_argument(
        "--actions",
        default=",".join(ACTIONS),
        help=f"comma-separated, of {', '.join(ACTIONS)}; 'none': open only",
    )
    parser.add_argument(
        "--settle-timeout",
        type=float,
        default=30.0,
        help="seconds an action waits for idle before cancelling its work",
    )
    parser.add_argument("--query", default="error", help="what the search types")
    parser.add_argument("--list-query", default="test", help="what the trace filter types")
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
        import faulthandler
        import signal

        faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: every stack
        stalls.verbose = True
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
