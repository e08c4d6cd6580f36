"""Budget pane: the current context against the window, soft/hard budget and threshold."""

from __future__ import annotations

from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from core.context.budget import Budget
from core.inspector.context_report import ContextReport
from core.replay.playback import TokensAsOf
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
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.status)
        layout.addWidget(self.bar)
        layout.addLayout(self.grid)
        layout.addStretch(1)

    def show_report(self, rep: ContextReport) -> None:
        b, tokens = rep.budget, rep.prompt_tokens
        self.bar.set_data(rep.parts, tokens, b)
        counted = "" if tokens == rep.total else f" ({rep.total:,} counted in the transcript)"
        self.status.setText(
            f"Current context: <b>{tokens:,}</b> tokens{counted} in {rep.items:,} items — "
            f"<b>{b.status(tokens)}</b> ({_limits(b)})"
        )
        self._markers(b, tokens)

    def show_tokens(self, label: str, t: TokensAsOf, b: Budget, note: str = "") -> None:
        """Playback: the tokens as of a past call (its context, its usage, the totals)."""
        self.bar.set_data(t.by_component, t.context_total, b)
        out = f"{t.output:,}" if t.output is not None else "—"
        text = (
            f"As of {label}: context <b>{t.context_total:,}</b> tokens — "
            f"<b>{b.status(t.context_total)}</b> ({_limits(b)})<br>"
            f"This call: {t.input:,} in / {out} out · so far: "
            f"{t.cumulative_input:,} in / {t.cumulative_output:,} out"
        )
        self.status.setText(text + (f"<br><i>{note}</i>" if note else ""))
        self._markers(b, t.context_total)

    def _markers(self, b: Budget, total: int) -> None:
        """One row per limit; the labels are made once and updated (playback calls this
        for every call)."""
        marks = b.markers()
        for row in range(len(marks), self.grid.rowCount()):  # fewer limits than before
            for col in range(3):
                item = self.grid.itemAtPosition(row, col)
                stale = item.widget() if item is not None else None
                if isinstance(stale, QLabel):
                    stale.setText("")
        for row, (name, value) in enumerate(marks):
            left = value - total
            texts = (
                name,
                f"{value:,} tokens",
                f"{left:,} left" if left >= 0 else f"{-left:,} over",
            )
            for col, text in enumerate(texts):
                item = self.grid.itemAtPosition(row, col)
                label = item.widget() if item is not None else None
                if isinstance(label, QLabel):
                    label.setText(text)
                else:
                    self.grid.addWidget(QLabel(text), row, col)


def _limits(b: Budget) -> str:
    """Where the limits come from, in words."""
    if b.source == "imported":  # an unknown window is already the status beside this
        window = f"window {b.window_text()}; " if b.window is not None else ""
        return f"{window}no runtime budgets on an imported trace"
    return f"limits from {b.source}"
