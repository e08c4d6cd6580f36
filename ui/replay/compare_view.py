"""The comparison view (issue 9, part 2): two traces side by side, call by call.

A window of its own (the main window stays usable): the summary metrics of both with the
delta, the settings that differ, input tokens per call as a chart with each side's
compactions, the call list, the two contexts of the selected call with the messages only
one side had highlighted (``core/inspector/comparison.py:context_diff``, computed on the task
runner), the retention report at the end, and "Export HTML report…"
(``core/replay/report.py:html_report``). Everything shown comes from
``core/inspector/comparison.py``.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelection, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.inspector.comparison import (
    ContextDiffRows,
    MetricRow,
    RetentionRow,
    SettingRow,
    abandoned_note,
    call_delta,
    call_text,
    context_diff,
    export_html,
    metric_rows,
    report_name,
    retention_rows,
    setting_rows,
)
from core.inspector.context_report import ReportRow
from core.inspector.wording import counted
from core.replay.compare import CallPair, Comparison, compare, tokens_text
from core.replay.report import COLORS
from core.store import Store
from ui.close_keys import add_close_keys
from ui.panes.common import RecordTable
from ui.panes.table_model import Column, RecordTableModel
from ui.replay.chart import TokenChart
from ui.split_pages import labelled_page, splitter
from ui.tasks import TaskRunner
from ui.widgets import push_button, wrapped_label

Index = QModelIndex | QPersistentModelIndex
ONLY_A = QColor(210, 70, 70, 60)
ONLY_B = QColor(46, 157, 98, 70)

METRIC_COLUMNS: list[Column[MetricRow]] = [
    Column("Metric", lambda r: r.label),
    Column("A", lambda r: r.a, align_right=True, tooltip=lambda r: r.a),
    Column("B", lambda r: r.b, align_right=True, tooltip=lambda r: r.b),
    Column("B − A", lambda r: r.delta, align_right=True),
]
SETTING_COLUMNS: list[Column[SettingRow]] = [
    Column("Setting", lambda r: r.key),
    Column("A", lambda r: r.a, tooltip=lambda r: r.a),
    Column("B", lambda r: r.b, tooltip=lambda r: r.b),
]
BASIS_TIP = {
    "recorded": "the prompt tokens the model's usage recorded for this call",
    "counted": "ctxlens's count (no usage recorded for this call)",
}
CALL_COLUMNS: list[Column[CallPair]] = [
    Column("Call", lambda p: p.k, align_right=True),
    Column("A input tokens", lambda p: tokens_text(p.a_tokens, p.a_tokens_basis),
           align_right=True, tooltip=lambda p: BASIS_TIP.get(p.a_tokens_basis or "", "")),
    Column("B input tokens", lambda p: tokens_text(p.b_tokens, p.b_tokens_basis),
           align_right=True, tooltip=lambda p: BASIS_TIP.get(p.b_tokens_basis or "", "")),
    Column("B − A", call_delta, align_right=True),
    Column("Only in A / B", call_text, color=lambda p: None if p.same else "#b03a2e",
           tooltip=lambda p: "same context" if p.same else
           f"messages only in A's context: {p.only_a}; only in B's: {p.only_b}"),
]  # fmt: skip
SIDE_COLUMNS: list[Column[ReportRow]] = [
    Column("#", lambda r: r.index, align_right=True),
    Column("Msg", lambda r: "synthetic" if r.sequence is None else r.sequence, align_right=True),
    Column("Role", lambda r: r.role),
    Column("Tokens", lambda r: f"{r.tokens:,}", align_right=True),
    Column("Content", lambda r: ("✎ " if r.overridden else "") + r.preview,
           tooltip=lambda r: r.preview),
]  # fmt: skip
RETENTION_COLUMNS: list[Column[RetentionRow]] = [
    Column("Facts of the whole history", lambda r: r.field),
    Column("A", lambda r: r.a),
    Column("B", lambda r: r.b),
    Column("Lost in A", lambda r: ", ".join(r.lost_a), tooltip=lambda r: "\n".join(r.lost_a)),
    Column("Lost in B", lambda r: ", ".join(r.lost_b), tooltip=lambda r: "\n".join(r.lost_b)),
]


class _Highlighted(RecordTableModel[Any]):
    """Rows marked by ``marked(row)`` get a tint (only-on-one-side, or a changed metric)."""

    def __init__(
        self, columns: list[Column[Any]], tint: QColor, parent: Any = None, bold: bool = False
    ) -> None:
        super().__init__(columns, parent)
        self.tint = tint
        self.bold = bold
        self.marked: frozenset[int] = frozenset()

    def set_marked(self, rows: frozenset[int]) -> None:
        self.marked = rows

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.BackgroundRole and index.row() in self.marked:
            return self.tint
        if role == Qt.ItemDataRole.FontRole and index.row() in self.marked and self.bold:
            font = QFont()
            font.setBold(True)
            return font
        return super().data(index, role)


class ComparisonWindow(QWidget):
    loaded = Signal(object)
    """The ``Comparison`` arrived and is shown."""
    diff_shown = Signal(object)
    """A ``ContextDiffRows`` (the selected call) is shown."""
    exported = Signal(str)

    def __init__(
        self, store: Store, runner: TaskRunner, a: str, b: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("comparisonWindow")
        self.setWindowTitle("Compare traces")
        self.store, self.runner, self.a, self.b = store, runner, a, b
        self.comparison: Comparison | None = None
        self.diff: ContextDiffRows | None = None
        self.file_dialog: QFileDialog | None = None
        self._build()
        add_close_keys(self)
        self.resize(1400, 900)

    # -- layout ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.heading = wrapped_label("Comparing…", "compareHeading")
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_button = push_button(
            "Export HTML report…",
            "exportButton",
            "One self-contained file (tables and the chart, no script or URL) to share",
            self.choose_export,
            enabled=False,
        )
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.export_button, 0, Qt.AlignmentFlag.AlignTop)

        self.metrics = _Highlighted(METRIC_COLUMNS, QColor(217, 165, 32, 45), self, bold=True)
        self.metrics_view = RecordTable(self.metrics, "")
        self.metrics_view.setObjectName("compareMetrics")
        _names_whole(self.metrics_view)
        self.settings = _Highlighted(SETTING_COLUMNS, QColor(217, 165, 32, 45), self, bold=True)
        self.settings_view = RecordTable(self.settings, "No run settings recorded.")
        _stretch_first(self.settings_view, (130, 130))
        left_tabs = QTabWidget()
        left_tabs.addTab(self.metrics_view, "Summary")
        left_tabs.addTab(self.settings_view, "Settings")
        self.chart = TokenChart()
        self.chart.call_clicked.connect(self.select_call)
        upper = splitter(Qt.Orientation.Horizontal, [left_tabs, self.chart], (2, 3), (760, 640))

        self.calls: RecordTableModel[CallPair] = RecordTableModel(CALL_COLUMNS, self)
        self.calls_view = RecordTable(self.calls, "No calls.")
        self.calls_view.setObjectName("compareCalls")
        for col, width in enumerate((40, 120, 120, 64)):
            self.calls_view.setColumnWidth(col, width)
        self.calls_view.selectionModel().selectionChanged.connect(self._call_selected)

        self.diff_label = wrapped_label(
            "Select a call to see what each side's model received.", "compareDiffLabel"
        )
        self.side_a = _Highlighted(SIDE_COLUMNS, ONLY_A, self)
        self.side_b = _Highlighted(SIDE_COLUMNS, ONLY_B, self)
        self.side_a_view = RecordTable(self.side_a, "")
        self.side_b_view = RecordTable(self.side_b, "")
        self.side_a_title = QLabel(f"<b style='color:{COLORS['a']}'>A</b>")
        self.side_b_title = QLabel(f"<b style='color:{COLORS['b']}'>B</b>")
        sides = QSplitter(Qt.Orientation.Horizontal)
        for title, view in ((self.side_a_title, self.side_a_view),
                            (self.side_b_title, self.side_b_view)):  # fmt: skip
            for col, width in enumerate((34, 64, 70, 60)):
                view.setColumnWidth(col, width)
            box = QWidget()
            bl = QVBoxLayout(box)
            bl.setContentsMargins(0, 0, 0, 0)
            bl.addWidget(title)
            bl.addWidget(view)
            sides.addWidget(box)
        diff_page = labelled_page(self.diff_label, sides)
        self.retention = RecordTableModel(RETENTION_COLUMNS, self)
        self.retention_view = RecordTable(self.retention, "No retention report.")
        self.retention_view.setObjectName("compareRetention")
        _stretch_first(self.retention_view, (150, 150, 260))
        self.retention_label = wrapped_label()
        ret_page = labelled_page(self.retention_label, self.retention_view)
        self.tabs = QTabWidget()
        self.tabs.addTab(diff_page, "Context at the selected call")
        self.tabs.addTab(ret_page, "Retention at the end")
        lower = splitter(
            Qt.Orientation.Horizontal, [self.calls_view, self.tabs], (1, 3), (490, 910)
        )
        split = splitter(Qt.Orientation.Vertical, [upper, lower], sizes=(330, 520))
        self.status = QLabel("")
        self.status.setObjectName("compareStatus")
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)

    # -- loading --------------------------------------------------------------------------
    def load(self) -> None:
        store, a, b = self.store, self.a, self.b
        self.status.setText("Comparing the two traces…")
        self.runner.submit(
            "compare traces", lambda _c: compare(store, a, b), self._show,
            on_error=self._failed, key="compare",
        )  # fmt: skip

    def _show(self, cmp: Comparison) -> None:
        self.comparison = cmp
        a, b = cmp.a, cmp.b
        self.setWindowTitle(f"Compare — {a.title or a.trace_id} vs {b.title or b.trace_id}")
        self.heading.setText(_heading(cmp))
        rows = metric_rows(cmp)
        self.metrics.set_marked(frozenset(n for n, r in enumerate(rows) if r.changed))
        self.metrics.set_records(rows)
        settings = setting_rows(cmp)
        self.settings.set_marked(frozenset(n for n, r in enumerate(settings) if r.changed))
        self.settings.set_records(settings)
        self.chart.set_data(
            a.input_tokens, b.input_tokens, a.compactions, b.compactions,
            a.input_basis, b.input_basis,
        )  # fmt: skip
        self.calls.set_records(cmp.pairs)
        self.retention.set_records(retention_rows(cmp))
        self.retention_label.setText(_retention_text(cmp))
        self.export_button.setEnabled(True)
        self.status.setText(
            f"{len(cmp.pairs):,} main-agent calls aligned by order; "
            f"{cmp.summary.get('same_context_calls', 0):,} with the same context"
        )
        first = cmp.first_difference
        if cmp.pairs:
            self.select_call(first if first is not None else 0)
        self.loaded.emit(cmp)

    def _failed(self, exc: BaseException) -> None:
        self.status.setText(f"Cannot compare: {type(exc).__name__}: {exc}")
        self.heading.setText("Comparison failed")

    # -- one call -------------------------------------------------------------------------
    def select_call(self, k: int) -> None:
        if self.comparison is None or not 0 <= k < len(self.comparison.pairs):
            return
        self.calls_view.selectRow(k)
        self.calls_view.scrollTo(self.calls.index(k, 0))

    def _call_selected(self, selected: QItemSelection, _old: Any) -> None:
        rows = selected.indexes()
        cmp = self.comparison
        if not rows or cmp is None:
            return
        k = rows[0].row()
        self.chart.select(k)
        pair = cmp.pairs[k]
        if not (pair.in_a and pair.in_b):
            self._clear_diff(f"Call {k}: only {'A' if pair.in_a else 'B'} made it.")
            return
        store, a, b = self.store, cmp.a.trace_id, cmp.b.trace_id
        self.diff_label.setText(f"Call {k}: loading both contexts…")
        self.runner.submit(
            f"compare call {k}", lambda _c: context_diff(store, a, b, k), self._show_diff,
            on_error=self._failed_diff, key="compare-diff",
        )  # fmt: skip

    def _show_diff(self, d: ContextDiffRows) -> None:
        self.diff = d
        self.side_a.set_marked(d.only_a)
        self.side_b.set_marked(d.only_b)
        self.side_a.set_records(d.a_rows)
        self.side_b.set_records(d.b_rows)
        ta, tb = sum(r.tokens for r in d.a_rows), sum(r.tokens for r in d.b_rows)
        self.side_a_title.setText(
            f"<b style='color:{COLORS['a']}'>A</b> · "
            f"{counted(len(d.a_rows), 'item')}, {ta:,} tokens counted · "
            f"<span style='background:rgba(210,70,70,0.25)'>&nbsp;{len(d.only_a):,} only in A"
            "&nbsp;</span>"
        )
        self.side_b_title.setText(
            f"<b style='color:{COLORS['b']}'>B</b> · "
            f"{counted(len(d.b_rows), 'item')}, {tb:,} tokens counted · "
            f"<span style='background:rgba(46,157,98,0.3)'>&nbsp;{len(d.only_b):,} only in B"
            "&nbsp;</span>"
        )
        self.diff_label.setText(
            f"Call {d.k}: "
            + ("both models received the same context." if d.same else
               "the contexts differ (rows only one side had are tinted; ref ids mapped).")
        )  # fmt: skip
        self.tabs.setCurrentIndex(0)
        self.diff_shown.emit(d)

    def _failed_diff(self, exc: BaseException) -> None:
        self._clear_diff(f"Cannot show the contexts: {type(exc).__name__}: {exc}")

    def _clear_diff(self, text: str) -> None:
        self.diff = None
        self.side_a.set_records([])
        self.side_b.set_records([])
        self.diff_label.setText(text)

    # -- export ---------------------------------------------------------------------------
    def choose_export(self) -> None:
        cmp = self.comparison
        if cmp is None:
            return
        dialog = QFileDialog(self, "Export HTML report", str(Path.home() / report_name(cmp)))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("HTML (*.html)")
        dialog.setDefaultSuffix("html")
        dialog.fileSelected.connect(self.export_to)
        self.file_dialog = dialog
        dialog.open()

    def export_to(self, path: str) -> Path | None:
        cmp = self.comparison
        if cmp is None:
            return None
        try:
            out = export_html(cmp, path)
        except OSError as exc:
            self.status.setText(f"Could not write {path}: {exc}")
            return None
        self.status.setText(f"Wrote {out}")
        self.exported.emit(str(out))
        return out

    def closeEvent(self, event: Any) -> None:
        self.runner.cancel("compare")
        self.runner.cancel("compare-diff")
        super().closeEvent(event)


def _heading(cmp: Comparison) -> str:
    a, b = cmp.a, cmp.b
    lines = [
        f"<b style='color:{COLORS['a']}'>A</b> {escape(a.title or '')} "
        f"<code>{escape(a.trace_id)}</code> ({escape(a.source)})",
        f"<b style='color:{COLORS['b']}'>B</b> {escape(b.title or '')} "
        f"<code>{escape(b.trace_id)}</code> ({escape(b.source)})",
    ]
    for name, side in (("B", b), ("A", a)):
        r = side.replay_of
        if r:
            what = ", ".join(r.get("settings") or []) or "its own settings"
            lines.append(
                f"{name} replays {escape(str(r.get('trace')))} from call "
                f"{escape(str(r.get('from_call')))} with {escape(what)}"
            )
    warning = length_warning(len(a.input_tokens), len(b.input_tokens))
    if warning:
        lines.append(f"<b>⚠ {escape(warning)}</b>")
    left_out = abandoned_note(cmp)
    if left_out:
        lines.append(escape(left_out))
    return "<br>".join(lines)


def length_warning(calls_a: int, calls_b: int) -> str | None:
    """Runs of different lengths: totals and percentages compare unequal amounts of work."""
    if calls_a == calls_b:
        return None
    return (
        f"The runs differ in length (A {calls_a:,} main-agent calls, B {calls_b:,}): totals "
        "and their percentages compare different amounts of work; per call, compare the "
        "rows both runs have."
    )


def _retention_text(cmp: Comparison) -> str:
    ra, rb = cmp.a.retention.get("ratio"), cmp.b.retention.get("ratio")
    return (
        "Facts of the whole history (refs, constraints, completed steps, skills, the task "
        "goal, pending items, failures) still visible in each side's last call: "
        f"A {_pct(ra)}, B {_pct(rb)}. Hover a lost list to read it whole."
    )


def _pct(value: Any) -> str:
    return f"{100 * value:.0f} %" if isinstance(value, (int, float)) else "—"


def _names_whole(view: RecordTable) -> None:
    """The metric names as wide as they are, the delta too; A and B share the rest (a long
    value, the compactions by level, is elided, whole in its tooltip). With the names
    stretched and the values sized to them, the values took the width and two rows both
    read "input token…" (main-agent and all calls: screenshot review)."""
    header = view.horizontalHeader()
    header.setStretchLastSection(False)
    fit, share = QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch
    for col, mode in enumerate((fit, share, share, fit)):
        header.setSectionResizeMode(col, mode)


def _stretch_first(view: RecordTable, widths: tuple[int, ...]) -> None:
    header = view.horizontalHeader()
    header.setStretchLastSection(False)
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for col, width in enumerate(widths, start=1):
        if width:
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive)
            view.setColumnWidth(col, width)
        else:
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
