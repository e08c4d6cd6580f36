"""Playback, "Re-run with…" and the comparison view, wired into the main window.

``install(window)`` is the main window's only line about them: it puts the scrubber under
the timeline, registers the actions (Navigate: step, play, live; Run: Re-run with…,
Compare traces…) and connects the trace browser's "Compare…".

What a re-run or a fork ended with stays in the status bar's outcome line
(``ReplayUi.outcome``, a normal status-bar widget: a hovered action's status tip covers it
for a moment, never erases it, as it erased a timed message) until the next one or another
store; a finished fork is also opened in the window at the edited message, beside the
comparison.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from ui.elided import ElidedLabel
from ui.one_dialog import show_one
from ui.replay.playback import Panes, PlaybackController
from ui.replay.scrubber import ScrubberBar

if TYPE_CHECKING:
    from core.inspector.rerun import RerunOutcome
    from ui.main_window import MainWindow
    from ui.replay.compare_view import ComparisonWindow
    from ui.replay.fork_dialog import ForkDialog
    from ui.replay.rerun_dialog import RerunDialog

RERUN_TIP = (
    "Re-run this trace offline with its recorded responses under other settings "
    "(window, compaction, injection…), then compare"
)
LIVE_TIP = "Leave playback: every pane shows the current state"
FORK_TIP = (
    "Edit the selected message (a user message, a tool result, a reply) and continue the "
    "run into a new trace, then compare the two"
)
COMPARE_TIP = "Compare two traces call by call (select two in the trace browser)"


class ReplayUi(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.bar = ScrubberBar()
        window.timeline.add_strip(self.bar)
        panes = Panes(window.timeline, window.goals, window.context, window.records, window.budget)
        self.playback = PlaybackController(window.session, window.runner, panes, self.bar, self)
        window.installEventFilter(self.playback)
        self.rerun_dialog: RerunDialog | None = None
        self.compare_window: ComparisonWindow | None = None
        self.fork_dialog: ForkDialog | None = None
        self.outcome = ElidedLabel()
        self.outcome.setObjectName("replayOutcome")
        window.statusBar().addWidget(self.outcome, 1)
        window.session.store_changed.connect(lambda: self.outcome.setText(""))
        self._actions()
        window.traces.compare_requested.connect(self.open_compare)
        # one notion of "step": a call chosen in the Context pane is a playback position
        window.context.calls.activated.connect(lambda _i: self.follow_context_call())
        for name in ("ctx.next", "ctx.prev", "ctx.current"):
            window.registry[name].triggered.connect(lambda _c=False: self.follow_context_call())
        self.playback.mode_changed.connect(self._mode_changed)

    def _actions(self) -> None:
        a, pb = self.window.registry.add, self.playback
        a("nav.playback_prev", "Playback: &previous call", lambda: pb.step(-1), "Alt+Left",
          "Show the state as of the previous model call", "Navigate")  # fmt: skip
        a("nav.playback_next", "Playback: &next call", lambda: pb.step(1), "Alt+Right",
          "Show the state as of the next model call", "Navigate")  # fmt: skip
        a("nav.playback_play", "Playback: play / pause", pb.toggle_play, "Ctrl+Shift+Space",
          "Play the model calls one after another at the scrubber's speed", "Navigate")  # fmt: skip
        a("nav.playback_live", "Playback: back to &live", pb.go_live, "Esc", LIVE_TIP,
          "Navigate", enabled=False)  # fmt: skip
        a("run.rerun", "Re-run &with…", self.show_rerun, "Ctrl+Shift+E", RERUN_TIP, "Run")
        a("run.compare", "Compare &traces…", self.compare_selected, "Ctrl+Shift+M",
          COMPARE_TIP, "Run")  # fmt: skip
        a("run.fork", "&Edit message and continue…", self.show_fork, "Ctrl+Shift+D", FORK_TIP,
          "Run")  # fmt: skip

    def follow_context_call(self) -> None:
        """Play back to the call the Context pane shows (its "next call" entry: live), so
        the timeline's in/out-of-context marks and every other pane agree with it."""
        chosen = self.window.context.calls.currentData()
        pb = self.playback
        if chosen is None:
            if pb.active:
                pb.go_live()
            return
        frames = pb.frames
        if not isinstance(chosen, int) or frames is None:
            return
        calls = frames.playback.calls
        position = next((c.position for c in calls if c.call_index == chosen), None)
        if position is not None and (pb.frame is None or pb.frame.call_index != chosen):
            pb.seek_call(position)

    def _mode_changed(self, playback: bool) -> None:
        self.window.registry["nav.playback_live"].setEnabled(playback)

    # -- re-run -----------------------------------------------------------------------------
    def show_rerun(self) -> None:
        w = self.window
        trace, store = w.session.trace(), w.session.store
        if trace is None or store is None:
            w.statusBar().showMessage("Open a trace first.", 4000)
            return
        frame = self.playback.frame
        start = frame.state.position if frame is not None else 0
        from ui.replay.rerun_dialog import RerunDialog  # loaded on first use (cold start)

        def make() -> RerunDialog:
            dialog = RerunDialog(store, w.runner, trace, start, w)
            dialog.finished_run.connect(self._replayed)
            return dialog

        running = lambda d: d.job is not None  # noqa: E731 (one replay at a time: show it)
        self.rerun_dialog = show_one(self.rerun_dialog, make, running)

    def _replayed(self, outcome: RerunOutcome, what: str = "Re-run") -> None:
        w = self.window
        w.traces.reload()
        self.outcome.setText(f"{what}: {outcome.headline()}")
        if outcome.result is not None:
            self.open_compare(outcome.source, outcome.result.trace_id)

    def _forked(self, outcome: RerunOutcome, sequence: int) -> None:
        """The fork's outcome line and comparison, and the fork itself in the window, at
        the edited message (the source stays one click away in the trace list)."""
        self._replayed(outcome, f"Fork at #{sequence}")
        if outcome.result is not None:
            self.window.timeline.select_after_reload(sequence)
            self.window.open_trace(outcome.result.trace_id)

    # -- fork with an edit --------------------------------------------------------------------
    def show_fork(self) -> ForkDialog | None:
        """Edit the message selected in the timeline and continue into a new trace."""
        w = self.window
        store, trace_id = w.session.store, w.session.trace_id
        seq = w.timeline.selected_sequence()
        if store is None or trace_id is None or seq is None:
            w.statusBar().showMessage("Select a message in the timeline first.", 5000)
            return None
        from ui.replay.fork_dialog import ForkDialog  # loaded on first use (cold start)

        with store.read() as r:
            message = r.message(trace_id, seq)

        def make() -> ForkDialog:
            dialog = ForkDialog(store, w.runner, trace_id, message, w)
            dialog.finished_run.connect(lambda outcome: self._forked(outcome, seq))
            return dialog

        self.fork_dialog = show_one(self.fork_dialog, make)
        return self.fork_dialog

    # -- compare ----------------------------------------------------------------------------
    def compare_selected(self) -> None:
        """The two traces selected in the browser; else the current trace and the one it
        replays (or its latest replay)."""
        w = self.window
        ids = w.traces.selected_ids()
        if len(ids) == 2:
            self.open_compare(ids[0], ids[1])
            return
        pair = _replay_pair(w)
        if pair is None:
            w.statusBar().showMessage(
                "Select two traces in the trace browser (Ctrl+click the second) to compare.",
                6000,
            )
            return
        self.open_compare(*pair)

    def open_compare(self, a: str, b: str) -> ComparisonWindow | None:
        w = self.window
        store = w.session.store
        if store is None:
            return None
        if self.compare_window is not None:
            self.compare_window.close()
            self.compare_window.deleteLater()
        from ui.replay.compare_view import ComparisonWindow  # loaded on first use

        view = ComparisonWindow(store, w.runner, a, b, w)
        self.compare_window = view
        view.show()
        view.load()
        return view


def _replay_pair(w: MainWindow) -> tuple[str, str] | None:
    trace = w.session.trace()
    if trace is None:
        return None
    replay_of = (trace.metadata or {}).get("replay_of")
    if isinstance(replay_of, dict) and isinstance(replay_of.get("trace"), str):
        return replay_of["trace"], trace.id
    for t in reversed(w.traces.model.records):
        meta = (t.metadata or {}).get("replay_of")
        if isinstance(meta, dict) and meta.get("trace") == trace.id:
            return trace.id, t.id
    return None


def install(window: MainWindow) -> ReplayUi:
    return ReplayUi(window)
