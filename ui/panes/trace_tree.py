"""The trace list as a tree: one row per trace, the samples of an Inspect eval under one
row for the eval; each row's figures come from ``core/inspector/trace_list.py``.

Sorting, the score filter and the filter bar's ``ListFilter`` are a ``TraceFilter`` proxy
over ``TraceTreeModel``: numbers sort as numbers (``SORT_ROLE``), an eval's samples sort
among themselves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSize,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QFont, QPainter, QPalette, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from core.cost.compute import format_cost, format_usd, recorded_cost_short, recorded_cost_text
from core.inspector.recorded_time import NO_ZONE, Basis, clock, shown, zone_note, zone_unknown
from core.inspector.trace_filter import ListFilter
from core.inspector.trace_list import EvalGroup, TraceSummary
from core.records import Trace

TRACE_ID_ROLE = Qt.ItemDataRole.UserRole + 1
SORT_ROLE = Qt.ItemDataRole.UserRole + 2
SCORE_ROLE = Qt.ItemDataRole.UserRole + 3
SUBTITLE_ROLE = Qt.ItemDataRole.UserRole + 4
ROW_ROLE = Qt.ItemDataRole.UserRole + 5
"""The row's ``TraceSummary`` (trace rows only), for the filter bar."""
COMPLETE_ROLE = Qt.ItemDataRole.UserRole + 6
"""On the Cost cell: whether its figure is the whole cost (every call priced)."""
#: Inspect's letter grades as numbers (its ``value_to_float``): correct, partial, incorrect.
GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}

Row = TraceSummary | EvalGroup
Cell = Callable[[Row], tuple[str, Any]]


def when(ts: float, basis: Basis = None) -> str:
    """A start time in few characters: month and day this year, the date before; a time
    whose zone the file did not record is its wall clock, marked so
    (``core/inspector/recorded_time.py``)."""
    now = time.localtime()
    t = clock(ts, basis)
    text = time.strftime("%b %d %H:%M" if t.tm_year == now.tm_year else "%Y-%m-%d", t)
    return f"{text} ({NO_ZONE})" if zone_unknown(basis) else text


def duration(seconds: float | None) -> str:
    """One format under a minute, tenths of a second ("3.9s", "0.4s"; it wrote "4s" beside
    "0.4s"), then minutes and seconds, hours and minutes."""
    if seconds is None:
        return ""
    if round(seconds, 1) < 60:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m {seconds % 60:02.0f}s"
    return f"{seconds // 3600:.0f}h {seconds % 3600 // 60:02.0f}m"


def compact(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else f"{n:,}"


def score_value(value: Any) -> float | None:
    """A score as a number where it is one (letter grades included)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return GRADES.get(value) if isinstance(value, str) else None


def _score(row: Row) -> tuple[str, Any]:
    if isinstance(row, EvalGroup):
        first = next(
            (v for s in row.header.get("scores") or [] for v in (s.get("metrics") or {}).values()),
            None,
        )
        text = f"{first:.2f}" if isinstance(first, float) else ("" if first is None else str(first))
        return text, first if isinstance(first, int | float) else -1.0
    value = (row.sample or {}).get("score")
    if value is None:
        return "", -1.0
    number = score_value(value)
    text = value if isinstance(value, str) else f"{value:g}" if number is not None else str(value)
    return str(text), number if number is not None else -1.0


def _title(row: Row) -> tuple[str, Any]:
    if isinstance(row, EvalGroup):
        task = str(row.header.get("task") or row.header.get("file") or "eval")
        return f"Eval {task}", task.lower()
    sample = row.sample
    if sample is not None:  # shown under its eval: the task is the group's
        score = _score(row)[0]
        head = f"#{sample.get('id')} epoch {sample.get('epoch')}" + (f" [{score}]" if score else "")
        text = " ".join(str(sample.get("input") or "").split())
        return (f"{head} {text}" if text else head), str(sample.get("id"))
    title = row.trace.title or row.trace.id
    return title, title.lower()


def _sum(get: Callable[[TraceSummary], int]) -> Cell:
    def cell(row: Row) -> tuple[str, Any]:
        n = sum(get(s) for s in row.samples) if isinstance(row, EvalGroup) else get(row)
        return compact(n), n

    return cell


def _start(row: Row) -> tuple[str, Any]:
    return _when(row), row.start


def _when(row: Row) -> str:
    """The start as recorded; ``undated`` where the file dated nothing (its import time
    would pass for the run's)."""
    if isinstance(row, EvalGroup):
        return when(row.start)
    return when(row.start, row.time_basis) if row.dated else "undated"


def _duration(row: Row) -> tuple[str, Any]:
    if isinstance(row, EvalGroup):
        known = [s.duration for s in row.samples if s.duration is not None]
        total = sum(known) if known else None
        return duration(total), total if total is not None else -1.0
    return duration(row.duration), row.duration if row.duration is not None else -1.0


def _model(row: Row) -> tuple[str, Any]:
    model = row.header.get("model") if isinstance(row, EvalGroup) else row.model
    return str(model or ""), str(model or "")


def _priced(row: Row) -> tuple[float | None, int, int]:
    """(USD of the priced calls, ``None`` where none is; priced calls; all calls)."""
    rows = row.samples if isinstance(row, EvalGroup) else (row,)
    known = [s.usd for s in rows if s.usd is not None]
    total = sum(known) if known else None
    return total, sum(s.priced_calls for s in rows), sum(s.calls for s in rows)


def _cost(row: Row) -> tuple[str, Any]:
    """USD of the priced calls, marked a lower bound when some calls have no price; blank
    where nothing is priced (never a guess)."""
    total, priced, calls = _priced(row)
    return usd_text(total, priced, calls), total if total is not None else -1.0


def _cost_complete(row: Row) -> bool:
    total, priced, calls = _priced(row)
    return total is not None and priced >= calls


def usd_text(usd: float | None, priced: int = 0, calls: int = 0) -> str:
    return "" if usd is None else format_cost(usd, priced, calls)


NO_PRICE = "no price in ctxlens's table"
"""A trace none of whose calls ctxlens's price table prices (the model is not in it, or no
call recorded usage): about ctxlens's table, not what the run cost."""


def _recorded_tokens(row: Row) -> tuple[str, Any]:
    rows = row.samples if isinstance(row, EvalGroup) else (row,)
    known = [s.recorded_tokens for s in rows if s.recorded_tokens is not None]
    if not known:
        return "", -1
    return compact(sum(known)), sum(known)


def _source(row: Row) -> tuple[str, Any]:
    source = "inspect" if isinstance(row, EvalGroup) else row.trace.source
    return source, source


#: (header, cell, right-aligned, shown by default): the title row carries the figures on a
#: second line (``subtitle``), so a narrow pane needs no other column; they can be shown.
COLUMNS: list[tuple[str, Cell, bool, bool]] = [
    ("Title", _title, False, True),
    ("Score", _score, True, False),
    ("Start", _start, False, False),
    ("Calls", _sum(lambda s: s.calls), True, False),
    ("Transcript tok", _sum(lambda s: s.tokens), True, False),
    ("Duration", _duration, True, False),
    ("Model", _model, False, False),
    ("Cost", _cost, True, False),
    ("Source", _source, False, False),
    ("Messages", _sum(lambda s: s.trace.messages), True, False),
    ("Recorded tok", _recorded_tokens, True, False),
]
#: Header tooltips: what a figure counts.
HEADER_TIPS = {
    "Transcript tok": "Tokens of the stored transcript, counted by ctxlens (all branches): "
    "not what the calls sent",
    "Recorded tok": "Prompt and completion tokens the calls' usage recorded, summed over "
    "every call (a prompt sent again counts again)",
    "Cost": "What ctxlens's price table makes of the recorded usage (≥: some calls have no "
    "price); a cost the tool itself recorded is in the second line and the tooltip",
}
START_COLUMN = 2
SCORE_COLUMN = 1
COST_COLUMN = 7
#: The sort choices of the pane: (label, column, descending).
SORTS = [
    ("Newest first", START_COLUMN, True),
    ("Oldest first", START_COLUMN, False),
    ("Best score", SCORE_COLUMN, True),
    ("Worst score", SCORE_COLUMN, False),
    ("Most tokens", 4, True),
    ("Most calls", 3, True),
    ("Most expensive", COST_COLUMN, True),
    ("Cheapest first", COST_COLUMN, False),
    ("Model", 6, False),
    ("Title", 0, False),
]


def subtitle(row: Row) -> str:
    """The figures under the title: start, duration, calls, tokens, model (and the eval's
    metrics; a sample's answer and target come first: after the cost and the usage they
    were past the pane's edge, only in the tooltip, screenshot review)."""
    if isinstance(row, EvalGroup):
        h = row.header
        metrics = ", ".join(
            f"{name} {f'{v:.3g}' if isinstance(v, float) else v}"
            for score in h.get("scores") or []
            for name, v in (score.get("metrics") or {}).items()
        )
        parts = [row.samples_text, metrics, h.get("model"), h.get("status")]
        return " · ".join(str(p) for p in (*parts, when(row.start)) if p)
    calls = row.calls
    parts = [
        _when(row),
        duration(row.duration),
        # what the tool recorded first, its figure first: the line is cut at the pane's width
        recorded_cost_short(row.trace.metadata),
        _priced_text(row, calls),
        f"{calls} call{'s' if calls != 1 else ''}",
        f"{compact(row.tokens)} tok in transcript",
        _usage_text(row),
    ]
    sample = row.sample
    if sample is not None:  # what an eval's reader looks for first, before the line is cut
        parts = [f"answer {sample.get('answer')}", f"target {sample.get('target')}", *parts]
    else:
        parts += [row.model or "", row.trace.source]
    return " · ".join(p for p in parts if p)


def _priced_text(row: TraceSummary, calls: int) -> str:
    """``$10.81 priced``: what ctxlens's price table makes of the usage, named so beside a
    cost the tool recorded ("$1.27 recorded by SWE-agent"): cut at the pane's edge, a bare
    "$0.04" read as either (screenshot review); ``format_cost``'s lower bound where some
    calls have no price. ``no price in ctxlens's table`` for none."""
    if row.usd is None:
        return NO_PRICE if calls else ""
    text = f"{format_usd(row.usd)} priced"
    if row.priced_calls < calls:
        return f"≥ {text} ({row.priced_calls:,} of {calls:,} calls priced)"
    return text


def tooltip(row: Row) -> str:
    if isinstance(row, EvalGroup):
        h = row.header
        lines = [f"Eval {h.get('task')} ({h.get('file')})", row.label]
        lines += [f"{k}: {h[k]}" for k in ("solver", "dataset", "created", "error") if h.get(k)]
        return "\n".join(lines)
    t = row.trace
    lines = [t.title]
    for key, value in (row.sample or {}).items():
        lines.append(f"{key}: {value}")
    lines += [
        f"source {t.source} · model {row.model or 'unknown'}",
        _start_line(row) + f" · duration {duration(row.duration) or 'not recorded'}",
        *([f"times: {note}"] if row.dated and (note := zone_note(row.time_basis)) else []),
        f"{row.calls} model calls · {t.messages:,} messages",
        f"{row.tokens:,} tokens in the transcript (counted by ctxlens, all branches)",
    ]
    if row.recorded_tokens is not None:
        lines.append(
            f"{row.recorded_tokens:,} tokens of recorded usage (prompt + completion of every "
            "call; a prompt sent again counts again)"
        )
    if recorded := recorded_cost_text(t.metadata):
        lines.append(f"cost: {recorded}")
    priced = usd_text(row.usd, row.priced_calls, row.calls)
    if priced:
        dates = ", ".join(f"{m} of {d}" for m, d in row.price_dates)
        lines.append(
            f"cost by ctxlens's price table: {priced}"
            + ("" if row.cost_complete else ": calls without a price are not in it")
            + (f" (prices {dates})" if dates else "")
        )
    elif row.calls:
        lines.append(
            f"cost by ctxlens's price table: {NO_PRICE} (the model is not in it, or the calls "
            "recorded no usage)"
        )
    lines.append(f"id {t.id}")
    return "\n".join(lines)


def _usage_text(row: TraceSummary) -> str:
    """``15.4M tok recorded usage`` where the calls recorded usage."""
    n = row.recorded_tokens
    return "" if n is None else f"{compact(n)} tok recorded usage"


def _start_line(row: TraceSummary) -> str:
    if not row.dated:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.start))
        return f"start not recorded (imported {at})"
    return f"start {shown(row.start, row.time_basis)}"


class TraceTreeModel(QStandardItemModel):
    """The store's traces and evals as rows; ``records`` are the traces, in store order."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels([c[0] for c in COLUMNS])
        for col, (name, *_rest) in enumerate(COLUMNS):
            if name in HEADER_TIPS:
                self.setHeaderData(
                    col, Qt.Orientation.Horizontal, HEADER_TIPS[name], Qt.ItemDataRole.ToolTipRole
                )
        self.records: list[Trace] = []
        self.scores: list[str] = []
        """Distinct sample scores, for the filter."""

    def set_rows(self, rows: list[Row]) -> None:
        self.removeRows(0, self.rowCount())
        self.records = []
        scores: set[str] = set()
        for row in rows:
            items = self._items(row)
            if isinstance(row, EvalGroup):
                for s in row.samples:
                    items[0].appendRow(self._items(s))
                    self.records.append(s.trace)
                    scores.add(_score(s)[0])
            else:
                self.records.append(row.trace)
            self.appendRow(items)
        self.scores = sorted(s for s in scores if s)

    def _items(self, row: Row) -> list[QStandardItem]:
        tip = tooltip(row)
        items = []
        for _, cell, right, _shown in COLUMNS:
            text, key = cell(row)
            item = QStandardItem(text)
            item.setEditable(False)
            item.setData(key, SORT_ROLE)
            item.setToolTip(tip)
            if right:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            items.append(item)
        items[0].setData(subtitle(row), SUBTITLE_ROLE)
        items[COST_COLUMN].setData(_cost_complete(row), COMPLETE_ROLE)
        if isinstance(row, TraceSummary):
            items[0].setData(row.trace.id, TRACE_ID_ROLE)
            items[0].setData(_score(row)[0], SCORE_ROLE)
            items[0].setData(row, ROW_ROLE)
        else:
            font = items[0].font()
            font.setBold(True)
            items[0].setFont(font)
        return items


class TraceFilter(QSortFilterProxyModel):
    """Sorts by ``SORT_ROLE``; shows the traces that have the chosen score and pass the
    filter bar's ``ListFilter`` (an eval is shown while one of its samples is)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setRecursiveFilteringEnabled(True)
        self.score: str | None = None
        self.rows = ListFilter()

    def set_score(self, score: str | None) -> None:
        self._refilter(lambda: setattr(self, "score", score))

    def set_rows_filter(self, rows: ListFilter) -> None:
        self._refilter(lambda: setattr(self, "rows", rows))

    def _refilter(self, change: Callable[[], None]) -> None:
        self.beginFilterChange()
        change()
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def lessThan(
        self, left: QModelIndex | QPersistentModelIndex, right: QModelIndex | QPersistentModelIndex
    ) -> bool:
        """A cost that is a lower bound (or absent) sorts after every whole cost, in either
        order: "Most expensive" must not rank a partial sum as if it were the total."""
        if left.column() == COST_COLUMN:
            whole, other = bool(left.data(COMPLETE_ROLE)), bool(right.data(COMPLETE_ROLE))
            if whole != other:
                return whole if self.sortOrder() == Qt.SortOrder.AscendingOrder else other
        return super().lessThan(left, right)

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:
        index = self.sourceModel().index(row, 0, parent)
        if self.score is not None and index.data(SCORE_ROLE) != self.score:
            return False
        if not self.rows.active:
            return True
        summary = index.data(ROW_ROLE)
        return isinstance(summary, TraceSummary) and self.rows.matches(summary)


class TwoLineDelegate(QStyledItemDelegate):
    """The title on the first line, ``SUBTITLE_ROLE`` in the placeholder colour under it."""

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        base = super().sizeHint(option, index)
        return QSize(base.width(), option.fontMetrics.height() * 2 + 6)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        title, opt.text = opt.text, ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        rect = opt.rect.adjusted(4, 2, -4, -2)
        half = rect.height() // 2
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = QPalette.ColorGroup.Normal
        text = opt.palette.color(
            group, QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        faint = text if selected else opt.palette.color(group, QPalette.ColorRole.PlaceholderText)
        painter.save()
        painter.setFont(opt.font)
        painter.setPen(text)
        top = rect.adjusted(0, 0, 0, -half)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        painter.drawText(
            top, flags, opt.fontMetrics.elidedText(title, Qt.TextElideMode.ElideRight, top.width())
        )
        painter.setPen(faint)
        plain = QFont(opt.font)
        plain.setBold(False)
        painter.setFont(plain)
        bottom = rect.adjusted(0, half, 0, 0)
        sub = str(index.data(SUBTITLE_ROLE) or "")
        painter.drawText(
            bottom,
            flags,
            opt.fontMetrics.elidedText(sub, Qt.TextElideMode.ElideRight, bottom.width()),
        )
        painter.restore()
