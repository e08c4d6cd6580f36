"""Issue 13: importing a folder from the window lists every file it skipped, with the
reason a direct import of that file gives (here Langfuse's ChatML map beside its exports);
the dialog stays open to show it instead of closing as after a clean import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.importers.non_traces import refusal
from tests.conftest import TRACES
from tests.ui.conftest import settle
from ui.main_window import MainWindow

LANGFUSE = TRACES / "otel_genai/langfuse__langfuse/worker/src/__tests__/chatml/framework-traces"
CHATML = LANGFUSE / "claude-agent-2025-12-22.chatml.json"
pytestmark = pytest.mark.skipif(not CHATML.is_file(), reason="shared traces not present")


def test_a_folder_import_lists_the_skipped_file_with_its_reason(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    with qtbot.waitSignal(window.importer.finished, timeout=60_000) as sig:
        window.import_paths([str(LANGFUSE)])
    report = sig.args[0]
    settle(qtbot, window)
    assert len(report.new_traces) == 3 and not report.errors
    (row,) = report.skipped
    assert (row.path, row.status, row.detail) == (str(CHATML), "skipped", refusal(CHATML))
    assert report.headline() == "imported 3 traces, 1 file skipped"
    dialog = window.importer.dialog
    assert dialog is not None and dialog.isVisible(), "a skip is shown, not closed away"
    assert dialog.label.text() == "Imported 3 traces, 1 file skipped."
    statuses = [dialog.model.records[i].status for i in range(dialog.model.rowCount())]
    assert statuses.count("skipped") == 1 and statuses.count("imported") == 3
    text = dialog.errors.toPlainText()
    assert dialog.errors.isVisible()
    assert text.startswith(f"skipped {CHATML.name}: a Langfuse ChatML map")
    assert "import the trace export it was made from (claude-agent-2025-12-22.trace.json)" in text
    assert not dialog.retry_row.isVisible(), "a known non-trace is not offered a format"
    (at,) = [i for i, s in enumerate(statuses) if s == "skipped"]
    shown = dialog.model.index(at, 5).data()
    assert shown.startswith("a Langfuse ChatML map (the chat messages"), "no path in Details"
