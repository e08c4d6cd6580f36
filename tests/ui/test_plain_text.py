"""Trace content is shown as typed: an imported goal title with HTML shows its tags
literally in the Goals pane, its detail strip and its tooltip (never an image or hidden
text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from core.records import GoalEvent, NewMessage
from core.store import Store
from tests.ui.conftest import settle
from ui.main_window import MainWindow
from ui.plain import plain_tip

TITLE = "<img src='x.png'><style>p{display:none}</style><b>hidden</b> & kept"


def _shown(tip: str) -> str:
    doc = QTextDocument()
    doc.setHtml(tip)
    return doc.toPlainText()


def test_plain_tip_shows_markup_literally() -> None:
    assert plain_tip("a < b, no tags") == "a < b, no tags"
    assert _shown(plain_tip(TITLE + "\nsecond line")) == TITLE + "\nsecond line"


def test_goal_title_with_html_is_plain_text_in_the_pane(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    db = tmp_path / "html.db"
    with Store.open(db) as s, s.write() as w:
        tr = w.create_trace("imported <i>title</i>", source="imported")
        (m,) = w.append(tr.id, [NewMessage("user", "hi", goal_id="1")])
        w.add_goal_event(GoalEvent(tr.id, m.sequence, "add", "1", {"title": TITLE}))
        w.add_goal_event(GoalEvent(tr.id, m.sequence, "focus", "1"))
    assert window.open_store(db)
    settle(qtbot, window)
    model = window.goals.model
    index = model.index_of("1")
    assert model.data(index) == f"1  {TITLE}"
    assert _shown(model.data(index, Qt.ItemDataRole.ToolTipRole)).startswith(f"1 {TITLE}")
    detail = window.goals.detail
    assert detail.textFormat() == Qt.TextFormat.PlainText and TITLE in detail.text()


def test_emoji_fonts_named_to_qt_are_installed_ones(qapp: Any) -> None:
    from PySide6.QtGui import QFontDatabase

    from ui.fonts import EMOJI_FAMILIES, use_emoji_fonts

    found = use_emoji_fonts()
    installed = set(QFontDatabase.families())
    assert found == [f for f in EMOJI_FAMILIES if f in installed]
    if found and hasattr(QFontDatabase, "applicationEmojiFontFamilies"):
        assert QFontDatabase.applicationEmojiFontFamilies()[: len(found)] == found
