"""Skills and grants panels (UI-5); clicking a row selects its message in the timeline."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from core.inspector.panels import (
    NOT_GRANTED,
    GrantRow,
    SkillRow,
    grant_rows,
    grant_summary,
    skill_rows,
)
from core.inspector.unrecorded import unknown_note, unrecorded_panels
from core.store import Store
from ui.panes.common import LOADING, NO_TRACE, RecordTable
from ui.panes.table_model import Column, RecordTableModel
from ui.session import Session
from ui.tasks import TaskRunner

SKILLS_EMPTY = "No skills were injected in this trace."
GRANTS_EMPTY = "No refs or grants in this trace."
"""A ctxlens run's empty lists; a trace whose source records none of them says so
(``core/inspector/unrecorded.py:unknown_note``), as playback does."""
SKILLS_AS_OF = "No skill injected by this call."
GRANTS_AS_OF = "Nothing granted by this call."

SKILL_STATUS_TIPS = {
    "present": "Its result is in the current context as written.",
    "placeholder": "Only a placeholder stands for its result in the current context.",
    "compacted away": "Its messages left the current context (a compaction removed them).",
    "re-injected": "The runtime injected it again after an earlier injection left the "
    "context; this one is present.",
}

SKILL_COLUMNS: list[Column[SkillRow]] = [
    Column("Skill", lambda r: r.skill),
    Column("Seq", lambda r: r.message_sequence, align_right=True),
    Column("Status", lambda r: r.status, tooltip=lambda r: SKILL_STATUS_TIPS.get(r.status, "")),
    Column("Reason", lambda r: r.reason),
    Column("Then", lambda r: r.note),
    Column("Call seq", lambda r: r.call_sequence, align_right=True),
    Column("Message id", lambda r: r.message_id),
]

NEVER_GRANTED_TIP = (
    "A ref the trace recorded (content the agent could be granted) that was never granted: "
    "not a grant. Listed after the grants, in grey."
)
MAX_COLUMN = 260
"""The widest a grants column grows to fit its content (the last one, Description, takes
what is left)."""

GRANT_COLUMNS: list[Column[GrantRow]] = [
    Column("Ref", lambda r: r.ref_id, tooltip=lambda r: r.description),
    Column("Kind", lambda r: r.kind),
    Column(
        "Status",
        lambda r: "never granted (ref only)" if r.status == NOT_GRANTED else r.status,
        tooltip=lambda r: NEVER_GRANTED_TIP if r.status == NOT_GRANTED else "",
    ),
    Column("Granted at", lambda r: r.granted_at),
    Column("By", lambda r: r.granted_by),
    Column("Revoked at", lambda r: r.revoked_at),
    Column("Why", lambda r: r.revoked_reason, tooltip=lambda r: r.revoked_reason),
    Column("Size", lambda r: r.size),
    Column("Cost", lambda r: r.cost, tooltip=lambda r: r.cost),
    Column("Description", lambda r: r.description),
]


@dataclass(frozen=True)
class Records:
    skills: list[SkillRow]
    grants: list[GrantRow]
    unrecorded: tuple[str, ...] = ()
    """``skills``/``grants`` when the trace's source does not record them."""
    shown: bool = True
    """A trace is shown (``False``: no trace open)."""

    def empty_text(self, key: str, recorded_empty: str) -> str:
        if not self.shown:
            return NO_TRACE
        return unknown_note(key) if key in self.unrecorded else recorded_empty


def load_records(store: Store, trace_id: str) -> Records:
    with store.read() as r:
        return Records(
            skill_rows(r, trace_id), grant_rows(r, trace_id), unrecorded_panels(r, trace_id)
        )


class _TablePane(QWidget):
    select_message = Signal(int)

    def __init__(self, name: str, table: RecordTable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.table = table
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(4, 4, 4, 4)
        self.box.addWidget(table)


class SkillsPane(_TablePane):
    def __init__(self, parent: QWidget | None = None) -> None:
        self.model: RecordTableModel[SkillRow] = RecordTableModel(SKILL_COLUMNS)
        table = RecordTable(self.model, NO_TRACE)
        super().__init__("skillsPane", table, parent)
        for col, width in enumerate((150, 50, 110, 70, 130, 60)):
            table.setColumnWidth(col, width)
        self.model.setParent(self)
        table.clicked.connect(self._clicked)

    def _clicked(self, index: QModelIndex) -> None:
        rec = self.model.record(index.row())
        if rec is not None:
            self.select_message.emit(rec.message_sequence)


class GrantsPane(_TablePane):
    def __init__(self, parent: QWidget | None = None) -> None:
        self.model: RecordTableModel[GrantRow] = RecordTableModel(
            GRANT_COLUMNS, dim=lambda r: r.status == NOT_GRANTED
        )
        table = RecordTable(self.model, NO_TRACE)
        super().__init__("grantsPane", table, parent)
        self.summary = QLabel("")
        self.summary.setObjectName("grantSummary")
        self.summary.setVisible(False)
        self.box.insertWidget(0, self.summary)
        for col, width in enumerate((70, 80, 80, 75, 60, 75, 160, 120, 90)):
            table.setColumnWidth(col, width)
        self.model.setParent(self)
        table.clicked.connect(self._clicked)

    def set_rows(self, rows: list[GrantRow]) -> None:
        """Show ``rows`` (grants first, then the refs never granted, greyed), say how many
        of each, and size every column but the last to its content."""
        if self.model.records != rows:
            self.model.set_records(rows)
        self.summary.setText(grant_summary(rows) if rows else "")
        self.summary.setVisible(bool(rows))
        if rows:
            self.fit_columns()

    def fit_columns(self) -> None:
        table = self.table
        for col in range(self.model.columnCount() - 1):
            table.resizeColumnToContents(col)
            table.setColumnWidth(col, min(table.columnWidth(col), MAX_COLUMN))

    def _clicked(self, index: QModelIndex) -> None:
        rec = self.model.record(index.row())
        if rec is None:
            return
        seq = rec.message_sequence if rec.message_sequence is not None else rec.source_sequence
        if seq is not None:
            self.select_message.emit(seq)


class RecordsLoader:
    """Loads both panels in one background query when the trace changes."""

    def __init__(
        self, session: Session, runner: TaskRunner, skills: SkillsPane, grants: GrantsPane
    ) -> None:
        self.session, self.runner, self.skills, self.grants = session, runner, skills, grants
        self._trace: str | None = None
        """The trace whose rows are shown (another one is cleared while it loads)."""
        self.neither_recorded: Callable[[], None] | None = None
        """Called when the trace records neither skills nor grants (the window brings a
        tab with figures to the front)."""

    def reload(self) -> None:
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            self._trace = None
            self._show(Records([], [], shown=False))
            return
        if trace_id != self._trace:  # not the last trace's rows meanwhile
            self._trace = trace_id
            for pane in (self.skills, self.grants):
                pane.model.set_records([])
                pane.table.empty_text = LOADING
                pane.table.viewport().update()
        self.runner.submit(
            "skills and grants", lambda _c: load_records(store, trace_id), self._show, key="records"
        )

    def _show(self, records: Records) -> None:
        self.skills.model.set_records(records.skills)
        self.grants.set_rows(records.grants)
        self.skills.table.empty_text = records.empty_text("skills", SKILLS_EMPTY)
        self.grants.table.empty_text = records.empty_text("grants", GRANTS_EMPTY)
        self.skills.table.viewport().update()
        self.grants.table.viewport().update()
        if {"skills", "grants"} <= set(records.unrecorded) and self.neither_recorded:
            self.neither_recorded()

    def show_as_of(
        self,
        skills: list[SkillRow] | None,
        grants: list[GrantRow] | None,
        skills_note: str = "",
        grants_note: str = "",
    ) -> None:
        """Playback: the rows as of a past call; ``None`` when the trace records none
        (the note is shown instead)."""
        self.runner.cancel("records")
        if self.skills.model.records != (skills or []):
            self.skills.model.set_records(skills or [])
        self.grants.set_rows(grants or [])
        self.skills.table.empty_text = skills_note if skills is None else SKILLS_AS_OF
        self.grants.table.empty_text = grants_note if grants is None else GRANTS_AS_OF
        self.skills.table.viewport().update()
        self.grants.table.viewport().update()
