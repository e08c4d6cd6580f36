"""Import from the window (IMP-1/2, UI-1): File → Import… or a drop onto the window.

``Importer`` runs ``core/inspector/imports.py:import_for_window`` on the task runner (off the
UI thread) and shows ``ImportDialog``, a non-modal window with a progress bar in bytes and a
Cancel button. Cancel asks the import to stop: the unit being read is rolled back, units
already written stay whole. Afterwards the dialog lists every path with what became of it;
it closes by itself when everything imported cleanly and no file of a folder was skipped
(a skipped file is listed with the reason a direct import of it gives).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.importers.formats import FORMATS
from core.inspector.imports import ImportReport, ImportRow, import_for_window
from ui.panes.common import RecordTable
from ui.panes.table_model import Column, RecordTableModel
from ui.session import Session
from ui.tasks import TaskControl, TaskRunner
from ui.widgets import wrapped_label

log = logging.getLogger("ctxlens.ui")
STATUS_COLORS = {
    "error": "#c0392b",
    "skipped": "#8a6d1f",
    "not imported (cancelled)": "#9a6a62",
}
ROW_COLUMNS: list[Column[ImportRow]] = [
    Column("Status", lambda r: r.status, color=lambda r: STATUS_COLORS.get(r.status)),
    Column("File", lambda r: Path(r.path).name, tooltip=lambda r: r.path),
    Column("Format", lambda r: r.format),
    Column("Messages", lambda r: f"{r.messages:,}" if r.trace_id else "", align_right=True),
    Column("Trace", lambda r: r.trace_id),
    Column("Details", lambda r: _short(r), tooltip=lambda r: r.detail),
]


def _size(n: int) -> str:
    return f"{n / 1_048_576:.1f} MB" if n >= 1_048_576 else f"{n / 1024:.0f} KB"


class ImportDialog(QDialog):
    cancel_requested = Signal()
    retry_requested = Signal(list, str)
    """Import these paths again as this format (the user chose it for unknown files)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("importDialog")
        self.setWindowTitle("Import traces")
        self.setModal(False)
        self.label = wrapped_label("Preparing…", "importLabel")
        self.bar = QProgressBar()
        self.bar.setObjectName("importProgress")
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        self.bar.setFormat("%p %")
        self.bytes = QLabel("")
        self.cancel_button = QPushButton("Cancel import")
        self.cancel_button.setObjectName("cancelImport")
        self.cancel_button.clicked.connect(self._cancel)
        self.model: RecordTableModel[ImportRow] = RecordTableModel(ROW_COLUMNS, self)
        self.table = RecordTable(self.model, "")
        self.table.setObjectName("importResults")
        for col, width in enumerate((110, 220, 80, 70, 130)):
            self.table.setColumnWidth(col, width)
        self.table.setVisible(False)
        self.errors = QPlainTextEdit()
        self.errors.setObjectName("importErrors")
        self.errors.setReadOnly(True)
        self.errors.setVisible(False)
        self.errors.setMaximumHeight(110)
        self.format_box = QComboBox()
        self.format_box.setObjectName("importFormat")
        for name in FORMATS:
            self.format_box.addItem(name, name)
        self.retry_button = QPushButton("Import them as this format")
        self.retry_button.setObjectName("importRetry")
        self.retry_button.clicked.connect(self._retry)
        self.retry_row = QWidget()
        retry = QHBoxLayout(self.retry_row)
        retry.setContentsMargins(0, 0, 0, 0)
        retry.addWidget(QLabel("Files of an unknown format:"))
        retry.addWidget(self.format_box)
        retry.addWidget(self.retry_button)
        retry.addStretch(1)
        self.retry_row.setVisible(False)
        self.unknown: list[str] = []
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.close)
        self.buttons.setVisible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.bytes)
        layout.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.errors)
        layout.addWidget(self.retry_row)
        layout.addWidget(self.buttons)
        self.resize(720, 200)

    def start(self, paths: Sequence[str]) -> None:
        names = ", ".join(Path(p).name for p in paths[:3]) + (" …" if len(paths) > 3 else "")
        self.label.setText(f"Importing {len(paths)} path{'s' if len(paths) != 1 else ''}: {names}")

    def set_progress(self, done: int, total: int) -> None:
        self.bar.setValue(int(1000 * done / total) if total else 0)
        self.bytes.setText(f"{_size(done)} of {_size(total)} read")

    def set_counting(self, done: int, total: int) -> None:
        """The traces are stored; their token counts are being filled in."""
        self.label.setText("Imported. Counting tokens (the traces can be browsed meanwhile)…")
        self.cancel_button.setText("Stop counting")
        self.bar.setValue(int(1000 * done / total) if total else 0)
        self.bytes.setText(f"{done:,} of {total:,} messages counted" if total else "")

    def _cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")
        self.cancel_requested.emit()

    def show_report(self, report: ImportReport) -> None:
        self.label.setText(report.headline().capitalize() + ".")
        self.bar.setVisible(False)
        self.bytes.setVisible(False)
        self.cancel_button.setVisible(False)
        self.model.set_records(report.rows)
        self.table.setVisible(True)
        failed = report.errors
        lines = [f"{Path(r.path).name or '?'}: {_for_window(r.detail)}" for r in failed]
        lines += [f"skipped {Path(r.path).name}: {_reason(r)}" for r in report.skipped]
        self.errors.setPlainText("\n".join(lines))
        self.errors.setVisible(bool(lines))
        self.unknown = [
            r.path for r in failed + report.skipped if r.path and UNKNOWN_FORMAT in r.detail
        ]
        self.retry_row.setVisible(bool(self.unknown))
        self.buttons.setVisible(True)
        self.resize(max(self.width(), 900), 360 + (110 if lines else 0))

    def _retry(self) -> None:
        self.retry_requested.emit(list(self.unknown), self.format_box.currentData())


#: What the importer says about a file it cannot place (core/importers/api.py).
UNKNOWN_FORMAT = "not a trace file of a known format"


def _for_window(detail: str) -> str:
    """The CLI's advice, in the window's words (the format box is below the list)."""
    from core.importers.api import FORCE_HINT

    return detail.replace(FORCE_HINT, "choose its format below")


def _reason(row: ImportRow) -> str:
    """A skip's reason without the path it starts with (the line names the file)."""
    return _for_window(_short(row))


def _short(row: ImportRow) -> str:
    """A row's detail without the path it starts with (the File column names it)."""
    return row.detail.removeprefix(f"{row.path}: ") if row.path else row.detail


@dataclass(frozen=True, slots=True)
class CountProgress:
    """Progress of the token counting that follows an import, in messages."""

    done: int
    total: int


class Importer(QObject):
    """Runs one import at a time and reports it; the window decides what to refresh."""

    finished = Signal(object)
    """The ``ImportReport``."""
    imported = Signal(object)
    """The ``ImportReport`` as soon as the traces are stored (before their token counts)."""

    def __init__(self, session: Session, runner: TaskRunner, parent: QWidget) -> None:
        super().__init__(parent)
        self.session, self.runner, self.window = session, runner, parent
        self.dialog: ImportDialog | None = None
        self.job: int | None = None
        self.on_worker_progress: Callable[[int, int], None] | None = None
        """Called on the worker thread with each progress report (tests pause an import
        at a known point with it)."""

    @property
    def running(self) -> bool:
        return self.job is not None and self.runner.running(self.job)

    def start(self, paths: Sequence[str | Path], fmt: str = "auto") -> bool:
        """Import ``paths`` (``fmt``: a format name forces it, as ``--format`` does)."""
        store = self.session.store
        if store is None or self.running or not paths:
            return False
        targets = [str(p) for p in paths]
        if self.dialog is not None:
            self.dialog.close()
            self.dialog.deleteLater()
        self.dialog = ImportDialog(self.window)
        self.dialog.start(targets)
        self.dialog.cancel_requested.connect(self.cancel)
        self.dialog.retry_requested.connect(self.start)
        self.dialog.show()
        hook = self.on_worker_progress

        def work(control: TaskControl) -> ImportReport:
            def progress(done: int, total: int) -> None:
                control.report((done, total))
                if hook is not None:
                    hook(done, total)

            return import_for_window(
                store,
                targets,
                progress=progress,
                cancel=control.cancel,
                imported=control.report,
                count_progress=lambda done, total: control.report(CountProgress(done, total)),
                fmt=fmt,
            )

        self.job = self.runner.submit(
            "import",
            work,
            self._done,
            on_error=self._failed,
            on_progress=self._progress,
            drain=True,
        )
        return True

    def cancel(self) -> None:
        if self.job is not None:
            self.runner.stop(self.job)

    def _progress(self, value: Any) -> None:
        if isinstance(value, ImportReport):
            if self.dialog is not None:
                self.dialog.set_counting(0, 0)
            self.imported.emit(value)
        elif self.dialog is not None and isinstance(value, CountProgress):
            self.dialog.set_counting(value.done, value.total)
        elif self.dialog is not None and isinstance(value, tuple):
            self.dialog.set_progress(*value)

    def _done(self, report: ImportReport) -> None:
        self.job = None
        if self.dialog is not None:
            if report.errors or report.cancelled or report.skipped:
                self.dialog.show_report(report)
            else:
                self.dialog.close()
        self.finished.emit(report)

    def _failed(self, exc: BaseException) -> None:
        """Only a bug gets here (bad input becomes rows): log it, list it, keep the window."""
        log.error("import failed", exc_info=exc)
        self.job = None
        row = ImportRow("", "", "error", detail=f"{type(exc).__name__}: {exc}")
        self._done(ImportReport([row]))
