"""The compact dialog in the real window: band → dialog → preview → apply → a new boundary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QImage

from core.context.view import current_items
from core.inspector.bands import Band
from core.inspector.compaction import CompactPreview
from core.records import NewMessage, Trace
from core.store import Store
from tests.ui.conftest import choose, settle
from ui.dialogs.compact import CompactDialog
from ui.main_window import MainWindow


def _compactions(path: Path, trace_id: str) -> int:
    with Store.open(path) as s, s.read() as r:
        return len(r.compactions(trace_id))


def _open_dialog(
    window: MainWindow, qtbot: Any, level: str | None = None
) -> tuple[CompactDialog, CompactPreview]:
    with qtbot.waitSignal(window.registry["run.compact"].triggered):
        window.registry["run.compact"].trigger()
    dialog = window.compact_dialog
    assert isinstance(dialog, CompactDialog)
    qtbot.waitUntil(dialog.isVisible)
    assert window.runner.busy, "the dry run runs on the task runner, not in the click"
    qtbot.waitUntil(lambda: dialog.current is not None, timeout=20_000)
    if level is not None:
        choose(dialog.level, level)
        qtbot.waitUntil(
            lambda: dialog.current is not None and dialog.current.request.level == level,
            timeout=20_000,
        )
    assert dialog.current is not None
    return dialog, dialog.current


def test_band_preview_apply_adds_a_boundary(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    model = window.timeline.model
    bands_before = list(model.bands)
    row = next(i for i in range(model.rowCount()) if model.locate(i)[0] == "band")
    window.timeline.select_view_row(row)
    band = window.timeline.selected_record()
    assert isinstance(band, Band) and band.level == "goal"

    dialog, cp = _open_dialog(window, qtbot)
    assert dialog.request().level == "goal", "the selected band's level is preselected"
    assert cp.preview.outcome.compacted and dialog.apply_button.isEnabled()
    assert dialog.diff.rowCount() == len(cp.rows)
    assert f"{cp.preview.outcome.tokens_saved:,} saved" in dialog.headline.text()
    assert "timezone-handling" in dialog.retention_label.text(), "a lost skill is named"
    removed = [r for r in cp.rows if r.status == "removed"]
    assert removed and _compactions(sample_path, sample_trace.id) == len(bands_before)

    with qtbot.waitSignal(dialog.applied, timeout=20_000):
        dialog.apply_button.click()
    settle(qtbot, window)
    assert not dialog.isVisible()
    assert _compactions(sample_path, sample_trace.id) == len(bands_before) + 1
    bands_after = window.timeline.model.bands
    assert len(bands_after) == len(bands_before) + 1
    new = bands_after[-1]
    assert new.level == "goal" and new.tokens_saved == cp.preview.outcome.tokens_saved
    assert new.removed == cp.preview.outcome.removed
    with Store.open(sample_path) as s, s.read() as r:
        items, _ = current_items(r, sample_trace.id)
    assert items == cp.preview.outcome.items
    # every pane reloaded: the skill whose result left is now compacted away
    statuses = [window.skills.model.record(i).status for i in range(2)]  # type: ignore[union-attr]
    assert statuses == ["compacted away", "compacted away"]
    assert "Recorded a goal compaction" in window.statusBar().currentMessage()


def test_a_level_that_changes_nothing_cannot_be_applied(window: MainWindow, qtbot: Any) -> None:
    dialog, _cp = _open_dialog(window, qtbot)
    with qtbot.waitSignal(dialog.previewed, timeout=20_000) as sig:
        choose(dialog.level, "snip")
    cp = sig.args[0]
    assert cp.request.level == "snip" and not cp.preview.outcome.compacted
    assert not dialog.apply_button.isEnabled()
    assert "unchanged" in dialog.headline.text()
    dialog.reject()


def test_parameters_reach_the_dry_run(window: MainWindow, qtbot: Any) -> None:
    dialog, _cp = _open_dialog(window, qtbot)
    dialog.level.setCurrentIndex(dialog.level.findData("auto"))
    qtbot.waitUntil(lambda: dialog.current is not None and dialog.current.request.level == "auto")
    assert dialog.current is not None and "not needed" in dialog.headline.text()
    dialog.threshold_box.setValue(0.05)
    with qtbot.waitSignal(dialog.previewed, timeout=20_000) as sig:
        dialog.threshold_box.editingFinished.emit()
    cp = sig.args[0]
    assert cp.request.threshold == 0.05 and cp.preview.outcome.compacted
    dialog.reject()


def test_selecting_a_row_shows_both_sides_in_full(window: MainWindow, qtbot: Any) -> None:
    dialog, cp = _open_dialog(window, qtbot, "goal")
    replaced = next(n for n, r in enumerate(cp.rows) if r.status == "replaced")
    dialog.table.selectRow(replaced)
    assert "details cleared" in dialog.after_text.toPlainText()
    assert "details cleared" not in dialog.before_text.toPlainText()
    dialog.reject()


def test_apply_after_the_head_moved_is_refused(
    window: MainWindow, qtbot: Any, sample_path: Path, sample_trace: Trace
) -> None:
    dialog, _cp = _open_dialog(window, qtbot, "goal")
    with Store.open(sample_path) as s:  # another writer appends meanwhile
        s.append(sample_trace.id, [NewMessage("user", "one more thing")])
    before = _compactions(sample_path, sample_trace.id)
    with qtbot.waitSignal(dialog.failed, timeout=20_000):
        dialog.apply_button.click()
    assert dialog.isVisible() and "head moved" in dialog.error.text()
    assert _compactions(sample_path, sample_trace.id) == before
    dialog.reject()


def test_dialog_screenshot_shows_the_diff(window: MainWindow, qtbot: Any, tmp_path: Path) -> None:
    dialog, cp = _open_dialog(window, qtbot, "goal")
    out = tmp_path / "compact.png"
    assert dialog.grab().save(str(out))
    image = QImage(str(out))
    assert image.width() >= 1000 and image.height() >= 600
    table = dialog.table
    assert table.isVisible() and table.height() > 250
    first = table.visualRect(dialog.diff.index(0, 1))
    assert first.isValid() and first.height() > 0, "rows are drawn"
    assert dialog.retention_table.model().rowCount() == len(cp.retention) > 0
    assert dialog.table.horizontalHeader().sectionSize(1) > 300, "the text columns get room"
    dialog.reject()


def test_the_level_help_speaks_of_the_threshold_the_dialog_shows(
    window: MainWindow, qtbot: Any
) -> None:
    """The auto help names the dialog's threshold, not the defaults' 0.5 (an import's
    threshold comes from its trace; a user may type another)."""
    dialog, _cp = _open_dialog(window, qtbot, level="auto")
    dialog.threshold_box.setValue(0.3)
    dialog.threshold_box.editingFinished.emit()
    assert "under 0.3 × the window" in dialog.help.text()
    dialog.threshold_box.setValue(0.75)
    dialog.threshold_box.editingFinished.emit()
    assert "under 0.75 × the window" in dialog.help.text()


def test_not_needed_says_why_in_words_and_grouped_figures(window: MainWindow, qtbot: Any) -> None:
    """It read "auto: not needed — 5754 <= 9600" (review, hcmp): an operator and raw
    numbers where the rest of the window writes 9,600 tokens."""
    dialog, _cp = _open_dialog(window, qtbot)
    dialog.level.setCurrentIndex(dialog.level.findData("auto"))
    qtbot.waitUntil(lambda: dialog.current is not None and dialog.current.request.level == "auto")
    dialog.window_box.setValue(200_000)
    with qtbot.waitSignal(dialog.previewed, timeout=20_000) as sig:
        dialog.window_box.editingFinished.emit()
    cp: CompactPreview = sig.args[0]
    o = cp.preview.outcome
    limit = int(cp.request.window * cp.request.threshold)
    assert cp.request.window == 200_000 and o.status == "not_needed"
    assert o.limit == limit and limit >= 1_000
    text = dialog.headline.text()
    assert text == (
        f"auto: not needed — the context's {o.tokens_before:,} tokens are within the "
        f"{limit:,}-token threshold"
    )
    assert "<=" not in text and str(limit) not in text
    dialog.reject()


def test_a_long_list_of_lost_facts_is_counted_not_cut(
    qtbot: Any, settings: Any, tmp_path_factory: Any, tmp_path: Path
) -> None:
    """The demo at the summary level loses ~60 refs: the retention line named all of them
    in one label, cut mid-line, and the line after it (lost skills come back) was out of
    sight. Now the first few are named, the rest counted, and the whole label is shown;
    every lost fact is still a row of the table."""
    from tests.helpers.shared_demo import demo_copy
    from tests.ui.conftest import open_window
    from ui.dialogs.compact import LOST_NAMED

    db, trace = demo_copy(tmp_path_factory, tmp_path / "store")
    window = open_window(qtbot, settings, db, trace=trace)
    dialog, cp = _open_dialog(window, qtbot, "summary")
    settle(qtbot, window)
    lost = [r for r in cp.retention if not r.kept]
    assert len(lost) > LOST_NAMED
    label = dialog.retention_label
    text = label.text()
    assert f"and {len(lost) - LOST_NAMED:,} more (every lost fact is a row below)" in text
    assert label.height() >= label.heightForWidth(label.width()), "the whole line is shown"
    rows = dialog.retention_table.model()
    assert sum(rows.index(i, 0).data() == "LOST" for i in range(rows.rowCount())) == len(lost)
