"""Live traces in the window: the Sources pane switches the folder watcher and the OTLP
receiver on; a session file that a test thread appends to shows up in the Traces pane,
and the open timeline grows by inserted rows (no reset), following the tail only while
the view is at the bottom."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES
from tests.core.live.watch_helpers import write_turn
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.panes.sources import SourcesPane

SESSION = TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
SOURCE = SESSION / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.fixture(autouse=True)
def _tool_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never watch the developer's own Claude Code or Codex folders."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))


def _pane(window: MainWindow) -> SourcesPane:
    pane = window.docks["sources"].widget()
    assert isinstance(pane, SourcesPane)
    return pane


def _append(path: Path, parts: list[list[bytes]]) -> None:
    t = threading.Thread(target=lambda: [write_turn(path, turn) for turn in parts])
    t.start()
    t.join()


@pytest.mark.skipif(not SOURCE.is_file(), reason="shared/traces not present")
def test_watched_session_grows_in_the_open_timeline(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    pane = _pane(window)
    folder = tmp_path / "agent-sessions"
    (folder / "proj").mkdir(parents=True)
    pane.choose_folder()
    pane.dialog.fileSelected.emit(str(folder))  # the user picks the folder
    pane.dialog.close()
    assert any(
        str(folder) in pane.folder_list.item(i).text() for i in range(pane.folder_list.count())
    )
    pane.watch_box.setChecked(True)
    qtbot.waitUntil(lambda: pane.model.records[0].state == "running", timeout=5000)

    lines = SOURCE.read_bytes().splitlines(keepends=True)
    parts = [lines[i : i + 300] for i in range(0, len(lines), 300)]
    live_file = folder / "proj" / SOURCE.name
    _append(live_file, parts[:3])
    before = {t.id for t in window.traces.model.records}
    qtbot.waitUntil(lambda: len(window.traces.model.records) == len(before) + 1, timeout=10_000)
    (trace,) = [t for t in window.traces.model.records if t.id not in before]
    assert trace.source == "claude-code"
    window.open_trace(trace.id)
    settle(qtbot, window)

    model, view = window.timeline.model, window.timeline.view
    resets: list[int] = []
    inserted: list[tuple[int, int]] = []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))

    # At the bottom: the view follows the tail.
    rows = model.rowCount()
    window.timeline.select_view_row(rows - 1)
    _append(live_file, parts[3:6])
    qtbot.waitUntil(lambda: model.rowCount() > rows, timeout=10_000)
    qtbot.waitUntil(lambda: view.currentIndex().row() == model.rowCount() - 1, timeout=5000)
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=5000)
    # rows went in at the end (and the compaction band whose summary just came, before
    # them), never by a reset
    assert inserted and inserted[-1][1] == model.rowCount() - 1 and not resets
    assert sum(last - first + 1 for first, last in inserted) == model.rowCount() - rows

    # Scrolled up with an early row selected: it stays put while rows come in.
    window.timeline.select_view_row(0)
    view.scrollToTop()
    rows = model.rowCount()
    _append(live_file, parts[6:9])
    qtbot.waitUntil(lambda: model.rowCount() > rows, timeout=10_000)
    assert view.currentIndex().row() == 0 and bar.value() == 0 and not resets
    assert pane.model.records[0].traces_seen == 1 and pane.model.records[0].errors == 0


def test_otlp_toggle_receives_spans_from_the_sdk_exporter(window: MainWindow, qtbot: Any) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from tests.core.live.otel_app import provider, run_agent

    pane = _pane(window)
    pane.otlp_edit.setText("127.0.0.1:0")
    pane.otlp_box.setChecked(True)
    status = next(s for s in pane.model.records if s.kind == "otlp")
    assert status.state == "running" and status.address.startswith("http://127.0.0.1:")
    assert not pane.otlp_edit.isEnabled()
    before = len(window.traces.model.records)
    p = provider(OTLPSpanExporter(endpoint=status.address))
    threading.Thread(target=lambda: (run_agent(p), p.shutdown())).start()
    qtbot.waitUntil(lambda: len(window.traces.model.records) == before + 1, timeout=10_000)
    qtbot.waitUntil(
        lambda: next(s for s in pane.model.records if s.kind == "otlp").traces_seen == 1,
        timeout=5000,
    )
    pane.otlp_box.setChecked(False)
    assert [s.state for s in pane.model.records if s.kind == "otlp"] in ([], ["stopped"])
    assert pane.otlp_edit.isEnabled()


def test_a_bad_otlp_address_is_refused_in_words(window: MainWindow, qtbot: Any) -> None:
    pane = _pane(window)
    errors: list[object] = []
    pane.failed.connect(errors.append)
    pane.otlp_edit.setText("localhost")
    pane.otlp_box.setChecked(True)
    assert not pane.otlp_box.isChecked()
    assert errors and "expected HOST:PORT" in str(errors[0])


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 720)])
def test_every_source_row_is_in_view_with_all_three_on(
    qtbot: Any, settings: Any, sample_path: Path, size: tuple[int, int]
) -> None:
    """Review 6: with the watcher, the OTLP receiver and the proxy on, the Sources table
    showed one row ("Watched folders") and a scroll bar: the dock's layout squeezed it to
    make room for the switches. Every source's row is now inside the table's viewport
    (the switches scroll instead), at the default size and at 1280×720."""
    import socket

    from tests.ui.conftest import open_window

    window = open_window(qtbot, settings, sample_path, size)
    pane = _pane(window)
    window.docks["sources"].raise_()
    pane.watch_box.setChecked(True)
    pane.otlp_edit.setText("127.0.0.1:0")
    pane.otlp_box.setChecked(True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    pane.proxy_listen.setText(f"127.0.0.1:{port}")
    pane.proxy_upstream.setText("http://127.0.0.1:9/v1")
    pane.proxy_box.setChecked(True)
    kinds = lambda: {r.kind for r in pane.model.records}  # noqa: E731
    qtbot.waitUntil(lambda: pane.refresh() or len(kinds()) == 3, timeout=10_000)
    settle(qtbot, window)
    table, model = pane.table, pane.model
    assert table.isVisible() and window.size().width() == size[0]
    viewport = table.viewport().rect()
    for row in range(model.rowCount()):
        cell = table.visualRect(model.index(row, 0))
        assert viewport.contains(cell), (row, model.records[row].name, cell, viewport)
    assert not table.verticalScrollBar().isVisible()
    window.sources.stop_all()


def _add_folder(pane: SourcesPane, folder: Path) -> None:
    pane.choose_folder()
    pane.dialog.fileSelected.emit(str(folder))  # the user picks the folder
    pane.dialog.close()


def _read_up_to(window: MainWindow, path: Path) -> int:
    from core.live.batches import last_batch

    store = window.session.store
    assert store is not None
    with store.read() as r:
        last = last_batch(r, str(path))
    return last.end if last else 0


@pytest.mark.skipif(not SOURCE.is_file(), reason="shared/traces not present")
def test_a_folder_added_while_watching_leaves_a_reply_being_written_open(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    """Adding a folder restarts the watcher, which is not a stop: a reply whose first
    record only has come keeps its call open, and the rest of its records (usage 441
    output tokens, not the first record's 10) reach the call; unticking *Watch session
    folders* is a stop and records what is still open. The calls are then those of an
    import of the same bytes."""
    from core.importers.api import import_paths
    from core.store import Store
    from tests.core.live.watch_helpers import calls

    pane = _pane(window)
    folder, other = tmp_path / "agent-sessions", tmp_path / "more-sessions"
    (folder / "proj").mkdir(parents=True)
    other.mkdir()
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    live_file = folder / "proj" / SOURCE.name
    live_file.write_bytes(b"".join(lines[:6]))  # line 6: the 1st of a reply's 6 records
    _add_folder(pane, folder)
    pane.watch_box.setChecked(True)
    qtbot.waitUntil(
        lambda: _read_up_to(window, live_file) == live_file.stat().st_size, timeout=10_000
    )
    _add_folder(pane, other)  # the watcher restarts
    qtbot.waitUntil(lambda: pane.model.records[0].state == "running", timeout=5000)
    with live_file.open("ab") as out:
        out.write(b"".join(lines[6:40]))
    qtbot.waitUntil(
        lambda: _read_up_to(window, live_file) == live_file.stat().st_size, timeout=10_000
    )
    pane.watch_box.setChecked(False)  # a stop: the reply still open gets its call
    store = window.session.store
    assert store is not None
    (trace,) = [t for t in store.traces() if t.source == "claude-code"]
    with Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [live_file])
        imported = calls(full, res.trace_id)
    assert calls(store, trace.id) == imported
    assert [c[6] for c in imported] == [441, 196]  # output tokens of the two replies
