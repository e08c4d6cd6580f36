"""File → Export: the shown trace as ctxlens JSON or OTLP JSON, written off the UI thread
(``core/inspector/export.py:export_file``). The comparison window exports its HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QMainWindow

from core.inspector.export import FORMATS, export_file, suggested_name
from ui.session import Session
from ui.tasks import TaskRunner


class TraceExporter(QObject):
    exported = Signal(str)
    """The path written."""

    def __init__(self, window: QMainWindow, session: Session, runner: TaskRunner) -> None:
        super().__init__(window)
        self.window, self.session, self.runner = window, session, runner
        self.file_dialog: QFileDialog | None = None

    def choose(self, fmt: str) -> None:
        if self.session.trace_id is None:
            self.window.statusBar().showMessage("No trace to export", 5000)
            return
        start = Path.home() / suggested_name(self.session.trace_id, fmt)
        dialog = QFileDialog(self.window, f"Export trace as {FORMATS[fmt][0]}", str(start))
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter(f"JSON (*{FORMATS[fmt][1]} *.json)")
        dialog.fileSelected.connect(lambda path: self.export_to(fmt, path))
        self.file_dialog = dialog
        dialog.open()

    def export_to(self, fmt: str, path: str) -> int | None:
        """Start writing; the status bar says where it went (or why not)."""
        store, trace_id = self.session.store, self.session.trace_id
        if store is None or trace_id is None:
            return None
        bar = self.window.statusBar()
        bar.showMessage(f"Exporting {trace_id} as {fmt}…")

        def done(out: Any) -> None:
            bar.showMessage(f"Exported {trace_id} to {out}", 8000)
            self.exported.emit(str(out))

        def failed(exc: BaseException) -> None:
            bar.showMessage(f"Could not export to {path}: {exc}", 10000)

        work = lambda _c: export_file(store, trace_id, fmt, path)  # noqa: E731
        return self.runner.submit("export trace", work, done, on_error=failed)
