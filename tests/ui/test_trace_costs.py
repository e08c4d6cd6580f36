"""Issue 21: the Traces pane shows what each trace cost and sorts by it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.records import LlmCall, NewMessage
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.panes.trace_tree import SUBTITLE_ROLE, TRACE_ID_ROLE
from ui.settings import AppSettings


def _trace(store: Store, title: str, model: str, prompt: int) -> str:
    tr = store.create_trace(title)
    store.append(tr.id, [NewMessage("user", f"task {title}"), NewMessage("assistant", "done")])
    usage = {"prompt_tokens": prompt, "completion_tokens": 0}
    with store.write() as w:
        w.record_llm_call(LlmCall(tr.id, 0, (), "0" * 64, model, 0, 1, usage))
    return tr.id


def test_traces_pane_shows_costs_and_sorts_by_them(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "c.db"
    with Store.open(db) as s:
        cheap = _trace(s, "cheap", "gpt-4o-mini", 1_000_000)  # $0.15
        dear = _trace(s, "dear", "claude-opus-4-1-20250805", 1_000_000)  # $15.00
        unknown = _trace(s, "unknown", "my-model", 1_000_000)
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.resize(1280, 720)
    win.show()
    assert win.open_store(db)
    settle(qtbot, win)
    pane = win.traces
    pane.sort.setCurrentText("Most expensive")
    model = pane.table.model()
    order = [model.index(i, 0).data(TRACE_ID_ROLE) for i in range(model.rowCount())]
    assert order[:2] == [dear, cheap] and order[2] == unknown
    subtitles = {model.index(i, 0).data(TRACE_ID_ROLE): model.index(i, 0).data(SUBTITLE_ROLE)
                 for i in range(model.rowCount())}  # fmt: skip
    assert "$15.00" in subtitles[dear] and "$0.15" in subtitles[cheap]
    assert "no price" in subtitles[unknown]
