"""Playback in the inspector (issue 9, part 1): every pane as of a past model call.

The controller indexes the shown trace once its main path has loaded
(``core/inspector/playback.py:PlaybackFrames``, on the task runner), then turns each scrub
into a frame computed off the UI thread — one in flight at a time; a scrub made meanwhile
replaces the wanted stop, so dragging never queues work. A frame moves the timeline cursor
to the call's head (later rows "not yet", "in context" = in that call's context), and gives
the goals, context, skills/grants and budget panes the state as of then. Live (or Esc)
reloads every pane with the current state. Another trace ends playback; a refresh of the
same one (a live run grew it, a compaction was applied, a rewind) re-indexes it and comes
back to the same call. A trace longer than ``AUTO_INDEX_ROWS`` is indexed only when asked
(the scrubber's link): indexing a million messages takes minutes and hundreds of MB.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView

from core.inspector.playback import PlaybackFrame, PlaybackFrames
from ui.panes.budget import BudgetPane
from ui.panes.context import ContextPane, DerivedCall
from ui.panes.goals import GoalPane
from ui.panes.skills_grants import RecordsLoader
from ui.replay.scrubber import ScrubberBar
from ui.session import Session
from ui.tasks import TaskRunner, reading
from ui.timeline.widget import TimelineWidget

AUTO_INDEX_ROWS = 50_000
"""Main paths up to this long are indexed for playback as soon as they load."""


@dataclass
class Panes:
    timeline: TimelineWidget
    goals: GoalPane
    context: ContextPane
    records: RecordsLoader
    budget: BudgetPane


class PlaybackController(QObject):
    frame_shown = Signal(object)
    """A ``PlaybackFrame`` was applied to the panes."""
    mode_changed = Signal(bool)
    """``True``: playback started; ``False``: back to live."""
    indexed = Signal()
    """The trace was indexed (the scrubber knows its stops)."""

    def __init__(
        self, session: Session, runner: TaskRunner, panes: Panes, bar: ScrubberBar,
        parent: QObject | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self.session, self.runner, self.panes, self.bar = session, runner, panes, bar
        self.frames: PlaybackFrames | None = None
        self.stop: int | None = None
        """The stop being shown (``None``: live)."""
        self.frame: PlaybackFrame | None = None
        self._job: int | None = None
        """The frame task running (one at a time)."""
        self._resume: tuple[str, int, bool] | None = None
        """``(trace, call position, playing)`` to come back to after a re-index."""
        self._wanted: int | None = None
        self.held: int | None = None
        """A call chosen in the Context pane that playback does not stop at (a compaction
        summarizer's, a subagent's): the Context pane keeps showing it while the other
        panes show the nearest main call (``PlaybackFrames.held_note`` says so)."""
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)
        bar.scrubbed.connect(self.scrub)
        bar.play_clicked.connect(self.toggle_play)
        bar.live_clicked.connect(self.go_live)
        bar.index_clicked.connect(self.index)
        bar.speed.currentIndexChanged.connect(self._speed_changed)
        bar.slider.sliderReleased.connect(self._settle_cursor)
        session.changed.connect(self._trace_changed)
        panes.timeline.main_path_loaded.connect(self._path_loaded)

    @property
    def active(self) -> bool:
        return self.stop is not None

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    # -- index ------------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        """Another trace, or the same one grown, rewound or compacted: the index is stale."""
        self._reset()

    def _path_loaded(self) -> None:
        """The main path (re)loaded, so every pane reloads with the current state: index the
        trace again (and come back to the call being played back, if it was this trace)."""
        self._reset()
        length = self.panes.timeline.model.length
        if length > AUTO_INDEX_ROWS:
            self.bar.set_deferred(length)
        else:
            self.index()

    def index(self) -> None:
        """Index the shown trace's calls for the scrubber (on the task runner)."""
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            return
        self.runner.submit(
            "index calls for playback",
            reading(store, PlaybackFrames.open, trace_id),
            self._indexed,
            key="playback-index",
        )

    def _reset(self) -> None:
        was = self.active
        if was and self.frames is not None and self.stop is not None:
            # a live run grew the trace, a compaction was applied: resume once re-indexed
            self._resume = (self.frames.trace_id, self.frames.stops[self.stop], self.playing)
        self.timer.stop()
        self.frames = None
        self.frame = None
        self.stop = None
        self._wanted = None
        self.held = None
        self.runner.cancel("playback-index")
        self.bar.has_trace = self.session.trace_id is not None
        self.bar.set_stops(0)
        if was:
            self.mode_changed.emit(False)

    def _indexed(self, frames: PlaybackFrames) -> None:
        if frames.trace_id != self.session.trace_id:
            return
        self.frames = frames
        self.bar.set_stops(len(frames.stops), frames.notes)
        resume, self._resume = self._resume, None
        if resume is not None and resume[0] == frames.trace_id and frames.stops:
            self.scrub(frames.stop_of(resume[1]))
            if resume[2]:
                self.timer.start(self._interval())
                self.bar.set_playing(True)
        self.indexed.emit()

    # -- scrubbing --------------------------------------------------------------------------
    def scrub(self, stop: int, held: int | None = None) -> None:
        """Show the state as of stop ``stop`` (an index into ``frames.stops``); ``held``:
        the call the Context pane keeps showing instead (``seek_call``)."""
        frames = self.frames
        if frames is None or not frames.stops:
            return
        stop = max(0, min(stop, len(frames.stops) - 1))
        started = self.stop is None
        self.stop = stop
        self.held = held
        if started:
            self.mode_changed.emit(True)
        self._request(stop)

    def step(self, delta: int) -> None:
        """One call back or forward (from live, back starts at the last call)."""
        frames = self.frames
        if frames is None or not frames.stops:
            return
        last = len(frames.stops) - 1
        current = self.stop if self.stop is not None else (last + 1 if delta < 0 else last)
        target = current + delta
        if 0 <= target <= last and target != self.stop:
            self.scrub(target)

    def seek_call(self, position: int) -> None:
        """Show the stop at (or before) call ``position``. A call that is not a stop (the
        main agent did not make it) stays in the Context pane, where it was chosen: the box
        jumped to the main call before it (102, a compaction summarizer's, showed 101)."""
        frames = self.frames
        if frames is not None and frames.stops:
            stop = frames.stop_of(position)
            self.scrub(stop, None if frames.stops[stop] == position else position)

    def _request(self, stop: int) -> None:
        if self._job is not None and self.runner.running(self._job):
            self._wanted = stop
            return
        store, frames = self.session.store, self.frames
        if store is None or frames is None:
            return
        self._wanted = None
        self._job = self.runner.submit(
            f"playback: call {frames.stops[stop]}",
            reading(store, frames.frame, stop),
            lambda f: self._arrived(frames, f),
            on_error=self._failed,
        )

    def _arrived(self, frames: PlaybackFrames, frame: PlaybackFrame) -> None:
        self._job = None
        if frames is not self.frames or self.stop is None:
            return  # another trace, or back to live meanwhile
        self.apply(frame)
        wanted, self._wanted = self._wanted, None
        if wanted is not None and wanted != frame.stop:
            self._request(wanted)

    def _failed(self, exc: BaseException) -> None:
        self._job = None
        self.timer.stop()
        self.bar.set_playing(False)
        self.runner.error.emit(exc)

    # -- the panes --------------------------------------------------------------------------
    def apply(self, frame: PlaybackFrame) -> None:
        self.frame = frame
        p, state = self.panes, frame.state
        self._move_cursor(frame)
        p.goals.show_as_of(frame.goals, frame.note("goals"))
        p.records.show_as_of(frame.skills, frame.grants, frame.note("skills"), frame.note("grants"))
        held = ""
        if self.held is not None and self.frames is not None:
            held = self.frames.held_note(self.held, frame.stop)
        if not held:  # else the Context pane keeps the call chosen there (not a stop)
            if frame.call_index is not None:
                p.context.select_call(frame.call_index)
            elif state.head is not None:
                label = f"Call {state.position} (the View at #{state.head})"
                p.context.show_head(state.head, label, self._derived(frame))
        p.budget.show_frame(frame)
        self.bar.show_frame(frame, held)
        self.frame_shown.emit(frame)

    def _derived(self, frame: PlaybackFrame) -> DerivedCall | None:
        """The frame's call as the Context pane compares it: its name and the next stop's
        head and name (a trace without call records: each call is derived from a reply)."""
        frames = self.frames
        if frames is None:
            return None
        following = None
        if frame.stop + 1 < len(frames.stops):
            nxt = frames.stops[frame.stop + 1]
            head = frames.playback.calls[nxt].head
            if head is not None:
                following = (head, frames.numbering.short(nxt))
        return DerivedCall(frames.numbering.short(frame.position), following)

    def _move_cursor(self, frame: PlaybackFrame) -> None:
        timeline, state = self.panes.timeline, frame.state
        model = timeline.model
        on_main = timeline.source is not None and timeline.source.head is None
        if state.head_row is None or not on_main:
            model.set_playback(None)
            return
        model.set_playback(state.head_row, frame.in_context)
        view_row = model.view_row_of(state.head_row)
        if view_row is None:
            return  # filtered out by a search: the cursor shows when the filter is cleared
        if self.playing or self.bar.slider.isSliderDown():
            # moving fast: only the cursor; selecting would render the message each time
            timeline.view.scrollTo(
                model.index(view_row), QAbstractItemView.ScrollHint.PositionAtCenter
            )
        else:
            timeline.select_view_row(view_row)  # the message pane shows the head

    def go_live(self) -> None:
        """Leave playback: every pane reloads the current state."""
        self._resume = None
        self.timer.stop()
        if self.stop is None:
            self.bar.set_live()
            return
        self.stop = None
        self.frame = None
        self._wanted = None
        self.held = None
        p = self.panes
        p.timeline.model.set_playback(None)
        model = p.timeline.model
        if model.length:
            last = model.view_row_of(model.length - 1)
            p.timeline.select_view_row(last if last is not None else 0)
        p.goals.reload()
        p.records.reload()
        p.context.select_call(None)
        self.bar.set_live()
        self.mode_changed.emit(False)

    # -- play -------------------------------------------------------------------------------
    def toggle_play(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def play(self) -> None:
        frames = self.frames
        if frames is None or not frames.stops:
            return
        last = len(frames.stops) - 1
        if self.stop is None or self.stop >= last:
            self.scrub(0)
        self.timer.start(self._interval())
        self.bar.set_playing(True)

    def pause(self) -> None:
        self.timer.stop()
        self.bar.set_playing(False)
        self._settle_cursor()

    def _settle_cursor(self) -> None:
        """Playback stopped moving: select the head row (the message pane shows it)."""
        if self.frame is not None and self.stop is not None:
            self._move_cursor(self.frame)

    def _tick(self) -> None:
        frames = self.frames
        if frames is None or self.stop is None:
            self.pause()
            return
        last = len(frames.stops) - 1
        if self.stop < last:
            self.scrub(self.stop + 1)
        if self.stop >= last:
            self.pause()

    def _interval(self) -> int:
        return max(20, int(1000 / self.bar.calls_per_second))

    def _speed_changed(self) -> None:
        if self.playing:
            self.timer.setInterval(self._interval())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Installed on the main window: playing stops when it closes."""
        if event.type() == QEvent.Type.Close:
            self.timer.stop()
        return False
