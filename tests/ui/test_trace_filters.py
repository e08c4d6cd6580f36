"""Issue 21: the Traces pane filters by model, date range, cost and tokens (with the text
filter), sorts by cost, and remembers the filter in the settings; real window, real store."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QDate, QModelIndex

from core.cost.table import load_table
from core.cost.totals import trace_totals, usd_by_trace
from core.inspector.trace_list import TraceSummary, summaries
from core.records import LlmCall, NewMessage
from core.store import Store
from tests.ui.conftest import open_window
from ui.main_window import MainWindow
from ui.panes.trace_filter_bar import ANY_MODEL
from ui.panes.trace_tree import TRACE_ID_ROLE
from ui.settings import AppSettings

DAY = 86_400
#: title, model, days before today it started, prompt tokens recorded, words in its message
TRACES = [
    ("refactor parser", "gpt-4o", 40, 3_000_000, 30),
    ("refactor lexer", "gpt-4o-mini", 20, 1_000_000, 400),
    ("write docs", "claude-sonnet-4", 10, 2_000_000, 60),
    ("triage bugs", "claude-sonnet-4", 2, 100_000, 2_000),
    ("local run", "my-model", 1, 5_000_000, 900),
]


def _store(db: Path) -> dict[str, str]:
    ids = {}
    now = time.time()
    with Store.open(db) as s:
        for title, model, days, prompt, words in TRACES:
            at = now - days * DAY
            tr = s.create_trace(title, created_at=at)
            s.append(tr.id, [NewMessage("user", " ".join(["word"] * words), created_at=at),
                             NewMessage("assistant", "done", created_at=at + 60)])  # fmt: skip
            usage = {"prompt_tokens": prompt, "completion_tokens": 1000}
            with s.write() as w:
                w.record_llm_call(LlmCall(tr.id, 0, (), "0" * 64, model, 0, 1, usage))
            ids[title] = tr.id
    return ids


def _rows(db: Path) -> list[TraceSummary]:
    with Store.open(db) as s:
        costs = usd_by_trace(trace_totals(s, load_table())[0])
        with s.read() as r:
            return summaries(r, costs)


def _window(qtbot: Any, settings: AppSettings, db: Path) -> MainWindow:
    win: MainWindow = open_window(qtbot, settings, db, (1280, 800))
    return win


def _shown(win: MainWindow) -> list[str]:
    proxy = win.traces.proxy
    return [proxy.index(i, 0, QModelIndex()).data(TRACE_ID_ROLE) for i in range(proxy.rowCount())]


def test_filters_compose_sort_and_are_remembered(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "f.db"
    ids = _store(db)
    rows = {r.trace.id: r for r in _rows(db)}
    win = _window(qtbot, settings, db)
    bar = win.traces.filters
    assert len(_shown(win)) == len(TRACES) and not win.traces.shown.isVisible()
    models = [bar.model.itemText(i) for i in range(bar.model.count())]
    assert models == [ANY_MODEL, *sorted({m for _, m, *_ in TRACES})], "choices from the store"

    bar.toggle.setChecked(True)
    bar.model.setCurrentText("claude-sonnet-4")
    assert set(_shown(win)) == {ids["write docs"], ids["triage bugs"]}
    assert win.traces.shown.text() == f"Showing 2 of {len(TRACES)} traces"
    assert bar.toggle.text() == "Filters (1)"
    bar.model.setCurrentText(ANY_MODEL)

    floor = sorted(r.usd for r in rows.values() if r.usd is not None)[1]
    bar.min_cost.setValue(floor)
    floor = bar.min_cost.value()  # as the box holds it (cents)
    expect = {tid for tid, r in rows.items() if r.usd is not None and r.usd >= floor}
    assert set(_shown(win)) == expect and ids["local run"] not in expect, "no price is not $0"
    bar.text.setText("refactor")  # composes with the text filter
    assert set(_shown(win)) == expect & {ids["refactor parser"], ids["refactor lexer"]}
    bar.min_cost.setValue(0)

    tokens = sorted(r.tokens for r in rows.values())
    bar.min_tokens.setValue(tokens[0] + 1)
    assert set(_shown(win)) == {
        tid for tid, r in rows.items() if r.tokens > tokens[0] and "refactor" in r.trace.title
    }
    bar.text.setText("")
    bar.min_tokens.setValue(0)

    bar.from_box.setChecked(True)
    bar.from_date.setDate(QDate.currentDate().addDays(-15))
    bar.to_box.setChecked(True)
    bar.to_date.setDate(QDate.currentDate().addDays(-2))
    assert set(_shown(win)) == {ids["write docs"], ids["triage bugs"]}
    assert bar.toggle.text() == "Filters (2)"

    win.traces.sort.setCurrentText("Most expensive")
    order = _shown(win)
    assert order == sorted(order, key=lambda tid: rows[tid].usd or -1, reverse=True)
    win.traces.sort.setCurrentText("Model")
    assert [rows[tid].model for tid in _shown(win)] == sorted(
        rows[tid].model or "" for tid in order
    )

    assert win.session.store is not None  # a trace written meanwhile: listed off the UI thread
    late = win.session.store.create_trace("late docs", created_at=time.time() - 5 * DAY)
    win.traces.reload()
    assert "Listing traces" in win.runner.labels() and late.id not in _shown(win)
    qtbot.waitUntil(lambda: late.id in _shown(win), timeout=10_000)  # within the dates
    win.close()

    again = _window(qtbot, AppSettings(settings.path), db)  # a new start, same settings
    assert set(_shown(again)) == {ids["write docs"], ids["triage bugs"], late.id}
    assert again.traces.filters.from_box.isChecked()
    again.traces.filters.clear.click()
    assert len(_shown(again)) == len(TRACES) + 1
    assert not again.traces.shown.isVisible()


def test_unreadable_remembered_filter_is_no_filter(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    db = tmp_path / "g.db"
    _store(db)
    settings.set("traces/filter", '{"min_usd": "lots", "model": 3, "after": [1]')
    win = _window(qtbot, settings, db)
    assert len(_shown(win)) == len(TRACES)
    settings.set("traces/filter", '{"min_usd": "lots", "model": 3, "text": "docs"}')
    win2 = _window(qtbot, AppSettings(settings.path), db)
    assert [win2.traces.model.records[i].title for i in range(len(TRACES))]
    assert len(_shown(win2)) == 1
