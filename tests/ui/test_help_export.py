"""Help → Keyboard shortcuts / A short tour, and File → Export trace as … from the window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.importers.api import import_paths
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow


def _menu_texts(window: MainWindow, title: str) -> list[str]:
    for action in window.menuBar().actions():
        if action.text().replace("&", "") == title:
            return [a.text().replace("&", "") for a in action.menu().actions()]
    raise AssertionError(f"no {title} menu")


def test_help_menu_lists_every_shortcut_and_a_tour(window: MainWindow, qtbot: Any) -> None:
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles[-1] == "Help"
    assert _menu_texts(window, "Help") == ["Keyboard shortcuts", "A short tour"]
    window.registry["help.shortcuts"].trigger()
    dialog = window.help.dialog
    assert dialog is not None
    qtbot.waitUntil(dialog.isVisible)
    text = dialog.text.toPlainText()
    for entry in window.registry.all():
        key = entry.action.shortcut().toString()
        if key:
            assert key in text, entry.id
    assert "Page Up/Page Down" in text
    window.registry["help.tour"].trigger()
    tour = window.help.dialog
    assert tour is not None and tour is not dialog
    qtbot.waitUntil(tour.isVisible)
    words = tour.text.toPlainText()
    for word in ("soft budget", "hard budget", "compaction threshold", "window", "Timeline"):
        assert word in words
    tour.close()


def test_export_json_and_otlp_from_the_window(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    texts = _menu_texts(window, "File")
    assert "Export trace as ctxlens JSON…" in texts and "Export trace as OTLP JSON…" in texts
    trace_id = window.session.trace_id
    assert trace_id is not None
    out = tmp_path / "t.ctxlens.json"
    with qtbot.waitSignal(window.exporter.exported, timeout=30_000) as sig:
        window.exporter.export_to("json", str(out))
    assert sig.args == [str(out)] and "Exported" in window.statusBar().currentMessage()
    with Store.open(tmp_path / "again.db") as again:
        report = import_paths(again, [out])
        (copy,) = again.traces()
        assert copy.messages == window.session.store.trace(trace_id).messages, report
    otlp = tmp_path / "t.otlp.json"
    with qtbot.waitSignal(window.exporter.exported, timeout=30_000):
        window.exporter.export_to("otlp", str(otlp))
    assert json.loads(otlp.read_text())["resourceSpans"]
    window.exporter.export_to("json", str(tmp_path / "missing" / "x.json"))
    qtbot.waitUntil(lambda: "Could not export" in window.statusBar().currentMessage())
    assert not (tmp_path / "missing").exists()
    settle(qtbot, window)
