"""Screenshot review (h13c), finding 5: the Message pane's facts at the window's default
size (1600×1000) and at the smallest it fits (1280×720), on the OpenHands trajectory whose
tool result's role reads "tool (str_replace_editor)". The grid is shown whole (its branch,
parent and created rows were cut off behind a scroll bar) and the long role has a line of
its own instead of wrapping inside half a line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QScrollArea

from core.store import Store
from tests.conftest import TRACES
from tests.ui.conftest import show_message
from tests.ui.test_imported_context_gui import _window_on
from ui.settings import AppSettings

BASIC = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
pytestmark = pytest.mark.skipif(not BASIC.is_file(), reason="shared/traces not present")


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 720)])
def test_the_facts_grid_is_shown_whole(
    qtbot: Any, settings: AppSettings, tmp_path: Path, size: tuple[int, int]
) -> None:
    tools = {e.get("tool_call_metadata", {}).get("function_name") for e in json.loads(
        BASIC.read_text(encoding="utf-8")) if isinstance(e, dict)}  # fmt: skip
    assert "str_replace_editor" in tools
    res, win = _window_on(qtbot, settings, tmp_path / "oh.db", BASIC, size=size)
    with Store.open(tmp_path / "oh.db") as s, s.read() as r:
        (seq,) = [
            m.sequence
            for m in r.iter_main_path(res.trace_id)
            if m.role == "tool" and m.name == "str_replace_editor"
        ]
    pane = show_message(qtbot, win, seq)
    facts = pane.facts
    area = facts.parentWidget().parentWidget()  # the scroll area around the grid
    assert isinstance(area, QScrollArea)
    needed = facts.heightForWidth(area.viewport().width())
    assert area.viewport().height() >= needed, (area.viewport().height(), needed)
    assert area.verticalScrollBar().maximum() == 0, "nothing of the grid is scrolled away"
    html = facts.text()
    assert "tool (str_replace_editor)</td>" in html and "colspan" in html
    for key in ("branch", "parent", "created"):
        assert f">{key}</td>" in html
    assert pane.tabs.height() >= 72, "the content keeps room under the facts"
    assert win.width() == size[0] and win.height() == size[1], "the window did not grow"
    assert win.last_error is None


LITELLM = next(
    TRACES.glob(
        "chat_messages/*/tests/fixtures/llm_data/llm-logs/litellm_proxy__anthropic__*.json"
    ),
    None,
)


@pytest.mark.skipif(LITELLM is None, reason="the shared litellm log is not there")
def test_a_replys_facts_say_which_number_ctxlens_counted(
    qtbot: Any, settings: AppSettings, tmp_path: Path
) -> None:
    """Screenshot review: above a reply's recorded "completion_tokens 199" the Message pane
    showed "tokens 151", ctxlens's count of the reply's text read as a second
    recording; and the usage was one run of fields, "audio_tokens None" among them, its
    names broken mid-word. The count is named "counted"; the usage is a field a line,
    its nulls left out, every name whole. Expected fields come from the raw log."""
    assert LITELLM is not None
    usage = json.loads(LITELLM.read_text(encoding="utf-8"))["response"]["usage"]

    def flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k: v})
        return out

    fields = flat(usage)
    assert fields["prompt_tokens_details.audio_tokens"] is None, "the log records nulls"
    res, win = _window_on(qtbot, settings, tmp_path / "log.db", LITELLM, size=(1280, 720))
    with Store.open(tmp_path / "log.db") as s, s.read() as r:
        (reply,) = [m for m in r.all_messages(res.trace_id) if m.usage]
    pane = show_message(qtbot, win, reply.sequence)
    facts = dict(pane.detail.facts)
    assert facts["counted"] == f"{reply.token_count:,} tok"
    lines = facts["usage"].split("\n")
    shown = {line.rsplit(" ", 1)[0]: line.rsplit(" ", 1)[1] for line in lines}
    assert shown == {k: f"{v:,}" for k, v in fields.items() if v is not None}
    assert "None" not in pane.facts.text()
    html = pane.facts.text()
    assert "completion_tokens 199" in html.replace("\u200b", "")
    assert "_\u200b" not in html, "no name breaks after an underscore"
    assert win.width() == 1280 and win.last_error is None
