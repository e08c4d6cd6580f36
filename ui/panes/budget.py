"""Budget pane: the current context against the window, soft/hard budget and threshold."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from core.context.budget import Budget
from core.inspector.context_report import ContextReport
from core.inspector.playback import (
    PlaybackFrame,
    input_text,
    output_text,
    run_totals_text,
    so_far_text,
)
from core.inspector.prompt import prompt_measure
from ui.panes.bar import TokenBar
from ui.widgets import wrapped_label


class BudgetPane(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("budgetPane")
        self.bar = TokenBar()
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(24)
        self.grid.setColumnStretch(3, 1)
        self.status = wrapped_label("No trace")
        inner = QWidget()
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.status)
        layout.addWidget(self.bar)
        layout.addLayout(self.grid)
        layout.addStretch(1)
        # a dock shorter than the figures scrolls: at 1280×720 the last line of the status
        # ("… input tokens per call are counted by ctxlens") was cut in half (screenshot
        # review); wrapped to the dock's width, never wider
        self.area = QScrollArea()
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QFrame.Shape.NoFrame)
        self.area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.area.setWidget(inner)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.area)

    def show_report(self, rep: ContextReport) -> None:
        """Live: the next call's context (an import's is an estimate: "≈")."""
        b, m = rep.budget, rep.measure
        self.bar.set_data(m.parts, m.tokens, b, m.estimated)
        self.status.setText(
            f"Current context: {m.headline()} in {rep.items:,} items — "
            f"<b>{b.status(m.tokens)}</b> ({b.limits_text()})"
        )
        self._markers(b, m.tokens, m.estimated)

    def show_frame(self, frame: PlaybackFrame) -> None:
        """Playback: the call's prompt measured as the Context pane measures it (recorded
        where recorded, the part the transcript lacks drawn), its usage and the totals."""
        t, b = frame.state.tokens, frame.budget
        m = frame.prompt or prompt_measure(t.by_component)
        self.bar.set_data(m.parts, m.tokens, b, m.estimated)
        lines = [
            f"As of {frame.name}: {m.headline()} — <b>{b.status(m.tokens)}</b> ({b.limits_text()})",
            f"This call: {input_text(t)} / {output_text(t)} · so far: {so_far_text(t)}",
        ]
        if t.run_totals is not None:
            totals = run_totals_text(t.run_totals)
            lines.append(totals[:1].upper() + totals[1:])
        note = frame.note("usage")
        if note:
            lines.append(f"<i>{note}</i>")
        self.status.setText("<br>".join(lines))
        self._markers(b, m.tokens, m.estimated)

    def _markers(self, b: Budget, prompt: int, estimated: bool = False) -> None:
        """One row per limit; the labels are made once and updated (playback calls this
        for every call). An observed limit (the auto-compact point) is named as such and
        what is left before it is an upper bound ("≤ 335 left")."""
        limits = b.limits_left(prompt, estimated)
        for row in range(len(limits), self.grid.rowCount()):  # fewer limits than before
            for col in range(3):
                item = self.grid.itemAtPosition(row, col)
                stale = item.widget() if item is not None else None
                if isinstance(stale, QLabel):
                    stale.setText("")
        for row, limit in enumerate(limits):
            texts = (limit.label, f"{limit.tokens:,} tokens", limit.left_text)
            for col, text in enumerate(texts):
                item = self.grid.itemAtPosition(row, col)
                label = item.widget() if item is not None else None
                if isinstance(label, QLabel):
                    label.setText(text)
                else:
                    self.grid.addWidget(QLabel(text), row, col)
