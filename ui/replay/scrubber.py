"""The playback strip under the timeline: a slider over the main agent's calls.

A pure view: it shows the stops, the call being played back (its label and what had
happened by then) and the play/pause and Live controls, and says what the user asked for
through signals. ``ui/replay/playback.py:PlaybackController`` decides what that means.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.inspector.playback import PlaybackFrame
from ui.theme import accent_note
from ui.widgets import wrapped_label

SPEEDS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
"""Calls per second."""
DEFAULT_SPEED = 2.0
PLAY_TIP = "Play the calls at the chosen speed (Ctrl+Shift+Space)"
NO_TRACE_TO_PLAY = "No trace open: nothing to play back."
PLAYBACK_STYLE = (
    "QWidget#scrubber[playback='true'] { background: rgba(217, 165, 32, 0.16); }"
    "QLabel#playbackMode { color: white; font-weight: bold; padding: 1px 6px; "
    "border-radius: 3px; background: #23794b; }"
    "QLabel#playbackMode[playback='true'] { background: #8a6408; }"
)


class ScrubberBar(QWidget):
    scrubbed = Signal(int)
    """The user chose a stop (slider, arrow keys, the step buttons)."""
    play_clicked = Signal()
    live_clicked = Signal()
    index_clicked = Signal()
    """A long trace's "index its calls" link was clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("scrubber")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(PLAYBACK_STYLE)
        self._quiet = False
        self.has_trace = False
        """A trace is shown (else there is nothing to play back, not "no calls")."""
        self.mode = QLabel("")
        self.mode.setObjectName("playbackMode")
        self.mode.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.mode.setMinimumWidth(76)
        icon = self.style().standardIcon
        sp = QStyle.StandardPixmap
        self.icons = {"play": icon(sp.SP_MediaPlay), "pause": icon(sp.SP_MediaPause)}
        self.first = _tool(icon(sp.SP_MediaSkipBackward), "First call")
        self.prev = _tool(icon(sp.SP_MediaSeekBackward), "Previous call (Alt+Left)")
        self.play = _tool(self.icons["play"], PLAY_TIP)
        self.play.setObjectName("playButton")
        self.next = _tool(icon(sp.SP_MediaSeekForward), "Next call (Alt+Right)")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("playbackSlider")
        self.slider.setSingleStep(1)
        self.slider.setPageStep(10)
        self.slider.setTickPosition(QSlider.TickPosition.NoTicks)
        self.slider.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.slider.setToolTip(
            "Scrub through the main agent's model calls: every pane shows the state as of "
            "the chosen call. Left/Right step one call, PgUp/PgDn ten."
        )
        self.speed = QComboBox()
        self.speed.setObjectName("playbackSpeed")
        for s in SPEEDS:
            self.speed.addItem(f"{s:g} calls/s", s)
        self.speed.setCurrentIndex(SPEEDS.index(DEFAULT_SPEED))
        self.speed.setToolTip("Playback speed")
        self.live = QPushButton("Live")
        self.live.setObjectName("liveButton")
        self.live.setToolTip("Leave playback: every pane shows the current state again (Esc)")
        self.label = wrapped_label(name="playbackLabel")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.linkActivated.connect(lambda _link: self._index_asked())
        self.notes = accent_note("playbackNotes", "warning")

        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(self.mode)
        for w in (self.first, self.prev, self.play, self.next):
            controls.addWidget(w)
        controls.addWidget(self.slider, 1)
        controls.addWidget(self.speed)
        controls.addWidget(self.live)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(2)
        layout.addLayout(controls)
        layout.addWidget(self.label)
        layout.addWidget(self.notes)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

        self.slider.valueChanged.connect(self._slid)
        self.first.clicked.connect(lambda: self.scrubbed.emit(0))
        self.prev.clicked.connect(lambda: self.step(-1))
        self.next.clicked.connect(lambda: self.step(1))
        self.play.clicked.connect(self.play_clicked)
        self.live.clicked.connect(self.live_clicked)
        self.set_stops(0)

    # -- what the controller shows ----------------------------------------------------------
    def set_stops(self, n: int, notes: str = "") -> None:
        """A trace was indexed (``n`` stops; 0: nothing to play back; ``notes``: what the
        trace does not record)."""
        with self._silent():
            self.slider.setRange(0, max(0, n - 1))
            self.slider.setValue(max(0, n - 1))
        for w in (self.slider, self.first, self.prev, self.next, self.play, self.speed):
            w.setEnabled(n > 0)
        self.notes.setText(notes)
        self.notes.setVisible(bool(notes))
        self.set_live(n)

    def set_live(self, n: int | None = None) -> None:
        """Live: the panes show the current state; the handle rests at the last call."""
        n = self.slider.maximum() + 1 if n is None else n
        with self._silent():
            self.slider.setValue(self.slider.maximum())
        self._mode(False)
        self.set_playing(False)
        if n:
            self.label.setText(
                f"The panes show the current state. {n:,} main-agent "
                f"{'call' if n == 1 else 'calls'} to play back: drag "
                "the slider, press play, or Alt+Left."
            )
        elif self.has_trace:
            self.label.setText("No model calls to play back in this trace.")
        else:
            self.label.setText(NO_TRACE_TO_PLAY)

    def set_deferred(self, messages: int) -> None:
        """A long trace: its calls are indexed only when the user asks (a link)."""
        self.set_stops(0)
        self.label.setText(
            f"{messages:,} messages: playback is not prepared for a trace this long. "
            "<a href='index'>Index its calls for playback</a> (takes a while)."
        )

    def _index_asked(self) -> None:
        self.label.setText("Indexing the calls for playback…")
        self.index_clicked.emit()

    def show_frame(self, frame: PlaybackFrame, held: str = "") -> None:
        """The call played back; ``held``: what the Context pane shows instead
        (``core/inspector/playback.py:PlaybackFrames.held_note``)."""
        with self._silent():
            self.slider.setValue(frame.stop)
        self._mode(True)
        text = f"<b>{escape(frame.label)}</b> — {escape(frame.detail)}"
        self.label.setText(text + (f"<br><i>{escape(held)}</i>" if held else ""))

    def set_playing(self, playing: bool) -> None:
        self.play.setIcon(self.icons["pause" if playing else "play"])
        self.play.setToolTip("Pause (Ctrl+Shift+Space)" if playing else PLAY_TIP)

    @property
    def calls_per_second(self) -> float:
        return float(self.speed.currentData())

    # -- input ------------------------------------------------------------------------------
    def step(self, delta: int) -> None:
        value = self.slider.value() + delta
        if self.slider.isEnabled() and self.slider.minimum() <= value <= self.slider.maximum():
            self.scrubbed.emit(value)

    def _slid(self, value: int) -> None:
        if not self._quiet:
            self.scrubbed.emit(value)

    def _mode(self, playback: bool) -> None:
        self.mode.setText("PLAYBACK" if playback else "LIVE")
        self.live.setEnabled(playback)
        for w in (self, self.mode):
            w.setProperty("playback", playback)
            w.style().unpolish(w)
            w.style().polish(w)

    def _silent(self) -> _Quiet:
        return _Quiet(self)


class _Quiet:
    """Set the slider from code without it reporting a scrub."""

    def __init__(self, bar: ScrubberBar) -> None:
        self.bar = bar

    def __enter__(self) -> None:
        self.bar._quiet = True

    def __exit__(self, *_exc: object) -> None:
        self.bar._quiet = False


def _tool(icon: QIcon, tip: str) -> QToolButton:
    button = QToolButton()
    button.setIcon(icon)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.setMinimumWidth(28)
    return button
