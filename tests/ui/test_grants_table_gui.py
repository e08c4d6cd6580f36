"""Screenshot review (h13c), finding 7: the Grants pane of the demo run at the window's
default size. Every column but the last fits its content (it cut "evidence_…" and
"tokens 1,10…"), and the refs the trace recorded but never granted are not shown as if
they were grants: listed after them, in grey italics, "never granted (ref only)", and the
line over the table counts each (from the store's grants and refs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics, QPalette

from core.store import Store
from tests.helpers.shared_demo import demo_copy
from tests.ui.conftest import open_window
from ui.settings import AppSettings

MAX_COLUMN = 260
"""``ui/panes/skills_grants.py:MAX_COLUMN``: the widest a column grows for its content."""


def test_grants_fit_their_columns_and_refs_never_granted_stand_apart(
    qtbot: Any, settings: AppSettings, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, trace = demo_copy(tmp_path_factory, tmp_path / "store")
    with Store.open(db) as s, s.read() as r:
        granted = {g.ref_id for g in r.grants(trace)}
        never = {ref.id for ref in r.refs(trace)} - granted
        n_grants = len(r.grants(trace))
    assert granted and never, "the demo grants a ref and records others it never grants"
    win = open_window(qtbot, settings, db, trace=trace)
    win.docks["grants"].raise_()
    pane = win.grants
    model, table = pane.model, pane.table
    qtbot.waitUntil(lambda: model.rowCount() == n_grants + len(never), timeout=20_000)
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    status = headers.index("Status")
    texts = [model.data(model.index(i, status)) for i in range(model.rowCount())]
    refs = [i for i, t in enumerate(texts) if t == "never granted (ref only)"]
    assert {model.records[i].ref_id for i in refs} == never
    assert refs == list(range(n_grants, model.rowCount())), "grants first, then the refs"
    dim = QPalette().color(QPalette.ColorRole.PlaceholderText)
    for i in range(model.rowCount()):
        italic = model.data(model.index(i, 0), Qt.ItemDataRole.FontRole)
        colour = model.data(model.index(i, 0), Qt.ItemDataRole.ForegroundRole)
        if i in refs:
            assert isinstance(italic, QFont) and italic.italic() and colour == dim
        else:
            assert italic is None and colour is None
    summary = pane.summary.text()
    assert pane.summary.isVisible()
    grants_word = "grant" if n_grants == 1 else "grants"
    assert summary.startswith(f"{n_grants} {grants_word} ("), summary
    assert f"{len(never)} refs never granted, listed after the grants in grey" in summary
    # every column but the last (Description) shows its cells whole, up to MAX_COLUMN
    plain = table.font()
    slanted = QFont(plain)
    slanted.setItalic(True)
    for col in range(model.columnCount() - 1):
        width = table.columnWidth(col)
        for i in range(model.rowCount()):
            text = str(model.data(model.index(i, col)) or "")
            fm = QFontMetrics(slanted if i in refs else plain)
            need = fm.horizontalAdvance(text)
            assert width >= min(need, MAX_COLUMN), (headers[col], text, width, need)
    assert win.last_error is None
