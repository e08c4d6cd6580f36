"""Context view (UI-4): exactly what the model received at a call, or will receive next.

The report (rows, token parts, budget) and the diff to the following call come from
``core/inspector/context_report.py``, computed on the task runner.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QComboBox, QTabWidget, QVBoxLayout, QWidget

from core.inspector.call_numbers import CallChoice, call_choices
from core.inspector.context_report import (
    ContextDiff,
    ContextReport,
    ReportRow,
    current_report,
    head_diff,
    last_call_diff,
    numbered_call_report,
)
from core.inspector.wording import counted, moved
from core.replay.context_origin import ContextOrigin
from core.store import Store
from ui.panes.bar import TokenBar
from ui.panes.common import LOADING, RecordTable
from ui.panes.table_model import Column, RecordTableModel
from ui.session import Session
from ui.tasks import TaskControl, TaskRunner, reading
from ui.widgets import wrapped_label

ROW_COLUMNS: list[Column[ReportRow]] = [
    Column("#", lambda r: r.index, align_right=True),
    Column("Msg", lambda r: "synthetic" if r.sequence is None else r.sequence, align_right=True),
    Column("Role", lambda r: r.role),
    Column("Tokens", lambda r: f"{r.tokens:,}", align_right=True),
    Column("Component", lambda r: r.component.replace("_", " ")),
    Column("Content", lambda r: ("✎ " if r.overridden else "") + r.preview,
           tooltip=lambda r: "content replaced by the boundary" if r.overridden else r.preview),
]  # fmt: skip

DIFF_COLUMNS: list[Column[ReportRow]] = [
    Column("Msg", lambda r: "synthetic" if r.sequence is None else r.sequence, align_right=True),
    Column("Role", lambda r: r.role),
    Column("Tokens", lambda r: f"{r.tokens:,}", align_right=True),
    Column("Content", lambda r: r.preview),
]


ROW_WIDTHS = (36, 52, 64, 64, 104)
"""Widths of ``ROW_COLUMNS`` but the last (#, Msg, Role, Tokens, Component)."""
DIFF_WIDTHS = (52, 64, 64)
"""Widths of ``DIFF_COLUMNS`` but the last (Msg, Role, Tokens)."""


@dataclass(frozen=True)
class Loaded:
    report: ContextReport
    diff: ContextDiff | None
    live: bool = True
    """The next call's context (the budget pane shows it)."""


NO_CONTEXT = "No context."
HEAD_PREFIX = "head:"
"""Call-box data of a derived call (a trace without call records): ``head:<sequence>``."""


@dataclass(frozen=True)
class DerivedCall:
    """A call the playback derives from a reply (a trace without call records): its name
    ("call 3"), and the next such call's head and name (``None`` for the last one)."""

    name: str
    following: tuple[int, str] | None


def load_context(
    store: Store,
    trace_id: str,
    call_index: int | str | None,
    c: TaskControl,
    derived: DerivedCall | None = None,
) -> Loaded:
    with store.read() as r:
        if isinstance(call_index, str):  # the View at a head: a call the trace did not record
            head = int(call_index.removeprefix(HEAD_PREFIX))
            report = current_report(r, trace_id, head, cancel=c.cancel, progress=c.report)
            origin = ContextOrigin("transcript")  # a call the trace did not record
            report = replace(report, label=f"the context at #{head}", origin=origin)
            diff = None
            if derived is not None:  # "No following call" was said of calls 3 of 0–5
                diff = head_diff(r, trace_id, head, derived.name, derived.following)
            return Loaded(report, diff, live=False)
        if call_index is None:
            report = current_report(r, trace_id, cancel=c.cancel, progress=c.report)
            diff = last_call_diff(r, trace_id)
        else:
            report, diff = numbered_call_report(r, trace_id, call_index, cancel=c.cancel)
    return Loaded(report, diff, live=call_index is None)


class ContextPane(QWidget):
    current_ready = Signal(object)
    """The next-call report was computed (the budget pane shows it)."""
    loaded = Signal(object)
    select_message = Signal(int)

    def __init__(self, session: Session, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextPane")
        self.session = session
        self.runner = runner
        self.report: ContextReport | None = None
        self.diff: ContextDiff | None = None
        self._calls_of: str | None = None
        self._derived: dict[int, DerivedCall] = {}
        """Derived calls shown so far, by head (their names and the next one's head)."""
        self.calls = QComboBox()
        self.calls.setObjectName("callBox")
        # long call labels must not widen the pane past its dock (the summary would clip)
        self.calls.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.calls.setMinimumContentsLength(24)
        self.calls.activated.connect(lambda _i: self.load())
        self.bar = TokenBar()
        self.bar.setVisible(False)  # until a report gives it figures (not the defaults)
        self.summary = wrapped_label()
        self.rows: RecordTableModel[ReportRow] = RecordTableModel(ROW_COLUMNS, self)
        self.rows_view = RecordTable(self.rows, NO_CONTEXT)
        # the figures first: the tokens stay in sight in a narrow dock (the default one is
        # ~340 px; the component and the content may run off to the right)
        for col, width in enumerate(ROW_WIDTHS):
            self.rows_view.setColumnWidth(col, width)
        self.rows_view.clicked.connect(lambda i: self._pick(self.rows, i))
        self.entered: RecordTableModel[ReportRow] = RecordTableModel(DIFF_COLUMNS, self)
        self.left: RecordTableModel[ReportRow] = RecordTableModel(DIFF_COLUMNS, self)
        self.entered_view = RecordTable(self.entered, "Nothing entered.")
        self.left_view = RecordTable(self.left, "Nothing left.")
        for view in (self.entered_view, self.left_view):
            for col, width in enumerate(DIFF_WIDTHS):
                view.setColumnWidth(col, width)
        self.entered_view.clicked.connect(lambda i: self._pick(self.entered, i))
        self.left_view.clicked.connect(lambda i: self._pick(self.left, i))
        # one table in sight at a time, with all the pane's height: beside each other in a
        # splitter, the call's items got a row and a half at 1280×720
        self.tables = QTabWidget()
        self.tables.setObjectName("contextTables")
        self.tables.addTab(self.rows_view, "Items")
        self.tables.addTab(self.entered_view, "Entered")
        self.tables.addTab(self.left_view, "Left")
        self.diff_label = wrapped_label()  # "call N → call N+1: …" outgrows a narrow dock
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.calls)
        layout.addWidget(self.bar)
        layout.addWidget(self.summary)
        layout.addWidget(self.diff_label)
        layout.addWidget(self.tables, 1)

    # -- loading --------------------------------------------------------------------------
    def reload(self) -> None:
        """A new trace or head: refill the call list (read off the UI thread: labelling
        a call decodes its whole item list) and show the next call."""
        store, trace_id = self.session.store, self.session.trace_id
        keep = self.calls.currentData() if self._calls_of == trace_id else None
        if self._calls_of != trace_id:
            self._derived.clear()
        self._calls_of = trace_id
        if store is None or trace_id is None:
            self._fill_calls([], None)
            self._clear()
            return
        self.summary.setText("Computing…")
        if not self.rows.records:
            self.rows_view.empty_text = LOADING
        self.runner.submit(
            "context calls",
            reading(store, call_choices, trace_id),
            lambda choices: self._fill_calls(choices, keep, load=True),
            key="context-calls",
        )

    def _fill_calls(
        self, choices: list[CallChoice], keep: int | str | None, load: bool = False
    ) -> None:
        self.calls.clear()
        self.calls.addItem("Next call (current context)", None)
        for choice in choices:
            self._add_choice(choice)
        if keep is not None:  # the same trace grew or moved: stay on the chosen call
            self.calls.setCurrentIndex(max(0, self.calls.findData(keep)))
        if load:
            self.load()

    def _add_choice(self, choice: CallChoice) -> None:
        """One call of the box; a call a rewind abandoned is dimmed (its label says so)."""
        self.calls.addItem(choice.label, choice.call_index)
        i = self.calls.count() - 1
        self.calls.setItemData(i, choice.tip, Qt.ItemDataRole.ToolTipRole)
        if choice.abandoned:
            dim = self.palette().color(QPalette.ColorRole.PlaceholderText)
            self.calls.setItemData(i, dim, Qt.ItemDataRole.ForegroundRole)

    def select_call(self, call_index: int | None) -> None:
        i = self.calls.findData(call_index)
        if i >= 0:
            self.calls.setCurrentIndex(i)
            self.load()

    def show_head(self, head: int, label: str, derived: DerivedCall | None = None) -> None:
        """Playback of a trace without call records: the context ctxlens's View gives at
        ``head`` (an entry of its own in the call box), compared with the next derived
        call's (``derived``)."""
        if derived is not None:
            self._derived[head] = derived
        data = f"{HEAD_PREFIX}{head}"
        i = self.calls.findData(data)
        if i < 0:
            self.calls.addItem(label, data)
            i = self.calls.count() - 1
        self.calls.setCurrentIndex(i)
        self.load()

    def step_call(self, delta: int) -> None:
        n = self.calls.count()
        if n:
            self.calls.setCurrentIndex((self.calls.currentIndex() + delta) % n)
            self.load()

    def load(self) -> None:
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            return
        call_index = self.calls.currentData()
        derived = None
        if isinstance(call_index, str):
            derived = self._derived.get(int(call_index.removeprefix(HEAD_PREFIX)))
        self.summary.setText("Computing…")
        self.runner.submit(
            "context view",
            lambda c: load_context(store, trace_id, call_index, c, derived),
            self._show,
            key="context",
        )

    def _clear(self) -> None:
        self.rows_view.empty_text = NO_CONTEXT
        self.bar.setVisible(False)
        self.report = self.diff = None
        self.rows.set_records([])
        self.entered.set_records([])
        self.left.set_records([])
        self.summary.setText("")
        self.diff_label.setText("")
        for i, name in enumerate(("Items", "Entered", "Left")):
            self.tables.setTabText(i, name)

    def _show(self, loaded: Loaded) -> None:
        rep = self.report = loaded.report
        self.diff = loaded.diff
        m = rep.measure
        self.bar.set_data(m.parts, m.tokens, rep.budget, m.estimated)
        self.bar.setVisible(True)
        self.rows_view.empty_text = NO_CONTEXT
        self.rows.set_records(rep.rows)
        self.tables.setTabText(0, f"Items ({len(rep.rows)})")
        self.summary.setText(_summary(rep))
        self._show_diff(loaded.diff)
        if loaded.live:
            self.current_ready.emit(rep)
        self.loaded.emit(rep)

    def _show_diff(self, diff: ContextDiff | None) -> None:
        if diff is None:
            self.entered.set_records([])
            self.left.set_records([])
            self.diff_label.setText("No following call by the same agent to compare with.")
            self.tables.setTabText(1, "Entered")
            self.tables.setTabText(2, "Left")
            return
        self.entered.set_records(diff.entered)
        self.left.set_records(diff.left)
        entered = moved(len(diff.entered), "entered", diff.tokens_entered, "+")
        left = moved(len(diff.left), "left", diff.tokens_left, "−")
        self.diff_label.setText(
            f"{diff.before_label} → {diff.after_label}: {entered}, {left}, {diff.kept:,} kept"
        )
        self.tables.setTabText(1, f"Entered ({len(diff.entered)})")
        self.tables.setTabText(2, f"Left ({len(diff.left)})")

    def _pick(self, model: RecordTableModel[ReportRow], index: QModelIndex) -> None:
        rec = model.record(index.row())
        if rec is not None and rec.sequence is not None:
            self.select_message.emit(rec.sequence)


def _summary(rep: ContextReport) -> str:
    b = rep.budget
    m = rep.measure
    tokens = m.tokens
    # The share of the window is the prompt's: where the record says more was sent than the
    # transcript holds, the prompt is named, so the share never reads as the counted tokens';
    # an estimated prompt (the next call of an import) keeps its "≈".
    prompt = "" if tokens == rep.total else f", prompt {m.approx}{tokens:,}"
    share = f"{100 * tokens / b.window:.0f}% of {b.window_share_text()}; " if b.window else ""
    parts = [
        f"<b>{rep.label}</b>: {counted(rep.items, 'item')}, <b>{rep.total:,}</b> tokens "
        f"counted{prompt}: {share}{b.status(tokens)}"
    ]
    if rep.images is not None:
        parts.append(rep.images.text)
    if rep.elided:
        parts.append(f"{rep.elided:,} items in the middle not listed")
    if rep.reconstructed:  # the tool logged no request: the hash is ctxlens's own
        pass
    elif rep.matches_record is True:
        parts.append("✓ request hash matches the recorded call")
    elif rep.matches_record is False:
        parts.append(
            "<span style='color:#d1495b'>✗ request hash differs from the recorded call</span>"
        )
    if rep.boundary_text:
        parts.append(f"starts from boundary “{rep.boundary_text}”")
    if rep.budget.limits_note():
        parts.append(rep.budget.limits_note())
    recorded = _recorded_parts(rep)
    return " · ".join(parts) + ("<br>" + " · ".join(recorded) if recorded else "")


def _recorded_parts(rep: ContextReport) -> list[str]:
    """Recorded prompt tokens beside the reconstruction, and what the transcript lacks."""
    rec = rep.recorded
    out = []
    if rep.origin is not None:  # the playback strip's words for the same call
        out.append(rep.origin.text)
    if rep.carried is not None:
        return out + _carried_parts(rep)
    if rec is None or rec.prompt_tokens is None:
        return out + (["no usage recorded"] if rep.call_index is not None else [])
    cached = f", {rec.cached_tokens:,} from cache" if rec.cached_tokens else ""
    out.append(f"recorded prompt <b>{rec.prompt_tokens:,}</b>{cached}")
    missing = rep.unexplained
    if missing is not None and missing > 0:
        out.append(f"{missing:,} {rep.gap_text}")
    elif missing is not None:
        out.append(f"transcript counted {-missing:,} above the record (tokenizer)")
    return out


def _carried_parts(rep: ContextReport) -> list[str]:
    """The next call of an import: the recorded prompt of the last call, what came after."""
    gap = rep.carried
    assert gap is not None
    after = rep.total - gap.reconstructed_tokens
    out = [
        f"next prompt ≈ <b>{rep.prompt_tokens:,}</b>: call {gap.call_index} recorded "
        f"{gap.recorded_prompt_tokens:,}, {after:+,} counted since"
    ]
    if gap.tokens > 0:
        out.append(f"{gap.tokens:,} {rep.gap_text}")
    else:
        out.append(f"transcript counted {-gap.tokens:,} above the record (tokenizer)")
    return out
