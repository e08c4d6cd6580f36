"""A row's one-line preview drops terminal escapes a tool's output carried (a Claude Code
hook log's ``ESC[1m``) while the stored message keeps them byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.importers.api import import_paths
from core.inspector.timeline import PREVIEW_CHARS, row_of, squash
from core.store import Store
from tests.conftest import TRACES

SESSION = next(iter(sorted((TRACES / "claude_code").rglob("0d3a8e6f-*.jsonl"))), None)


def test_escape_sequences_are_dropped_from_a_line() -> None:
    text = "\x1b[1mPostToolUse\x1b[22m ok \x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b(B end"
    assert squash(text) == "PostToolUse ok link end"
    assert squash("plain  text") == "plain text"


@pytest.mark.skipif(SESSION is None, reason="the shared Claude Code session is not there")
def test_rows_of_a_real_session_show_no_escapes(tmp_path: Path) -> None:
    assert SESSION is not None
    raw_escapes = SESSION.read_text(encoding="utf-8").count("\\u001b[")
    assert raw_escapes > 0, "the session logs coloured hook output"
    with Store.open(tmp_path / "s.db") as s:
        (res,) = import_paths(s, [SESSION])
        with s.read() as r:
            segs = r.segments(res.trace_id, r.trace(res.trace_id).head)
            n = r.main_path_length(res.trace_id)
            previews = r.main_path_previews(res.trace_id, 0, n, segs, PREVIEW_CHARS * 4)
            whole = r.main_path_page(res.trace_id, 0, n, segments=segs)
    stored = [m for m in whole if "\x1b[" in m.content]
    assert stored, "the stored messages keep what was recorded"
    rows = [row_of(p) for p in previews]
    assert all("\x1b" not in row.preview for row in rows)
    shown = {row.sequence: row.preview for row in rows}
    assert any("PostToolUse" in shown[m.sequence] for m in stored)
