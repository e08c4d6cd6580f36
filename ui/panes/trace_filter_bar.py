"""The Traces pane's filter bar: a text box, and a "Filters" panel under it with the model,
a date range, cost at least and tokens at least (``core/inspector/trace_filter.py:ListFilter``).

The bar only edits a ``ListFilter`` and says so with ``changed``; the pane applies it to the
rows it holds (no store read) and remembers it in the settings.
"""

from __future__ import annotations

from PySide6.QtCore import QDate, QDateTime, QTime, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDoubleSpinBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.inspector.trace_filter import ListFilter

ANY_MODEL = "any model"
MAX_TOKENS = 2_000_000_000


class TraceFilterBar(QWidget):
    changed = Signal(object)
    """The new ``ListFilter``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("traceFilterBar")
        self._quiet = False
        self.text = QLineEdit()
        self.text.setObjectName("traceTextFilter")
        self.text.setPlaceholderText("Filter by title, id, model…")
        self.text.setClearButtonEnabled(True)
        self.toggle = QToolButton()
        self.toggle.setObjectName("traceFiltersToggle")
        self.toggle.setText("Filters")
        self.toggle.setCheckable(True)
        self.toggle.setToolTip("Filter by model, date, cost and tokens")
        self.panel = self._panel()
        self.panel.setVisible(False)
        self.toggle.toggled.connect(self.panel.setVisible)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.text, 1)
        row.addWidget(self.toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.panel)
        self.text.textChanged.connect(self._edited)

    def _panel(self) -> QFrame:
        panel = QFrame()
        panel.setObjectName("traceFilterPanel")
        panel.setFrameShape(QFrame.Shape.StyledPanel)
        self.model = QComboBox()
        self.model.setObjectName("traceModelFilter")
        self.model.addItem(ANY_MODEL)
        self.from_box, self.from_date = _date_pick("From", "Started on or after this day")
        self.to_box, self.to_date = _date_pick("To", "Started on or before this day")
        self.min_cost = QDoubleSpinBox()
        self.min_cost.setObjectName("traceCostFilter")
        self.min_cost.setRange(0.0, 1_000_000.0)
        self.min_cost.setDecimals(2)
        self.min_cost.setPrefix("$")
        self.min_cost.setSpecialValueText("any")
        self.min_cost.setToolTip("Traces whose priced calls cost at least this (no price: hidden)")
        self.min_tokens = QSpinBox()
        self.min_tokens.setObjectName("traceTokenFilter")
        self.min_tokens.setRange(0, MAX_TOKENS)
        self.min_tokens.setSingleStep(10_000)
        self.min_tokens.setGroupSeparatorShown(True)
        self.min_tokens.setSpecialValueText("any")
        self.min_tokens.setToolTip("Traces with at least this many transcript tokens")
        self.clear = QPushButton("Clear filters")
        self.clear.setObjectName("clearTraceFilters")
        self.clear.clicked.connect(self.clear_facets)
        grid = QGridLayout(panel)
        grid.setContentsMargins(6, 4, 6, 4)
        grid.addWidget(QLabel("Model"), 0, 0)
        grid.addWidget(self.model, 0, 1, 1, 3)
        grid.addWidget(self.from_box, 1, 0)
        grid.addWidget(self.from_date, 1, 1, 1, 3)
        grid.addWidget(self.to_box, 2, 0)
        grid.addWidget(self.to_date, 2, 1, 1, 3)
        grid.addWidget(QLabel("Cost ≥"), 3, 0)
        grid.addWidget(self.min_cost, 3, 1)
        grid.addWidget(QLabel("Tokens ≥"), 3, 2)
        grid.addWidget(self.min_tokens, 3, 3)
        grid.addWidget(self.clear, 4, 2, 1, 2)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.model.currentIndexChanged.connect(self._edited)
        for box, date in ((self.from_box, self.from_date), (self.to_box, self.to_date)):
            box.toggled.connect(date.setEnabled)
            box.toggled.connect(self._edited)
            date.dateChanged.connect(self._edited)
        self.min_cost.valueChanged.connect(self._edited)
        self.min_tokens.valueChanged.connect(self._edited)
        return panel

    # -- state --------------------------------------------------------------------------
    def current(self) -> ListFilter:
        model = self.model.currentText()
        return ListFilter(
            text=self.text.text(),
            model=None if model in ("", ANY_MODEL) else model,
            span=(
                _day_start(self.from_date.date()) if self.from_box.isChecked() else None,
                _day_start(self.to_date.date().addDays(1)) if self.to_box.isChecked() else None,
            ),
            min_usd=self.min_cost.value() or None,
            min_tokens=self.min_tokens.value() or None,
        )

    def set_filter(self, f: ListFilter) -> None:
        """Show ``f`` (a remembered filter) without announcing each widget's change."""
        self._quiet = True
        try:
            self.text.setText(f.text)
            if f.model is not None and self.model.findText(f.model) < 0:
                self.model.addItem(f.model)
            self.model.setCurrentText(f.model or ANY_MODEL)
            _set_day(self.from_box, self.from_date, f.after)
            _set_day(self.to_box, self.to_date, None if f.before is None else f.before - 1)
            self.min_cost.setValue(f.min_usd or 0.0)
            self.min_tokens.setValue(min(f.min_tokens or 0, MAX_TOKENS))
        finally:
            self._quiet = False
        self._edited()

    def set_models(self, models: list[str]) -> None:
        """The models of the store's traces (the chosen one is kept even when absent)."""
        chosen = self.model.currentText()
        self._quiet = True
        self.model.clear()
        self.model.addItems([ANY_MODEL, *models])
        if chosen not in (ANY_MODEL, *models):
            self.model.addItem(chosen)
        self.model.setCurrentText(chosen)
        self._quiet = False

    def clear_facets(self) -> None:
        self.set_filter(self.current().cleared())

    def _edited(self) -> None:
        f = self.current()
        self.toggle.setText(f"Filters ({f.facets})" if f.facets else "Filters")
        if not self._quiet:
            self.changed.emit(f)


def _date_pick(label: str, tip: str) -> tuple[QCheckBox, QDateEdit]:
    box = QCheckBox(label)
    box.setToolTip(tip)
    date = QDateEdit(QDate.currentDate())
    date.setCalendarPopup(True)
    date.setDisplayFormat("yyyy-MM-dd")
    date.setEnabled(False)
    date.setToolTip(tip)
    return box, date


def _day_start(day: QDate) -> float:
    return float(QDateTime(day, QTime(0, 0)).toSecsSinceEpoch())


def _set_day(box: QCheckBox, edit: QDateEdit, ts: float | None) -> None:
    box.setChecked(ts is not None)
    if ts is not None:
        edit.setDate(QDateTime.fromSecsSinceEpoch(int(ts)).date())
