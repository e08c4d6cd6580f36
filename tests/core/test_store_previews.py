"""A timeline page reads only what its rows show (``Reader.main_path_previews``, issue 20),
and the rows come out exactly as from whole messages. Runs on every backend (``substr``
must count characters, not bytes, on each)."""

from __future__ import annotations

from core.inspector.timeline import READ_CHARS, row_of
from core.records import NewMessage, ToolCall
from core.store import Store
from core.store.triggers import PENDING_TOKENS

LONG = "ünïcødé 🧭 " * 200 + "\n\n  tail words  " * 50
"""Longer than what a row reads, multi-byte characters across the cut, whitespace runs."""


def _trace(store: Store) -> str:
    call = ToolCall("c1", "apply_patch", '{"path": "a.py", "patch": "' + "x" * 500 + '"}')
    msgs = [
        NewMessage("system", "be brief"),
        NewMessage("user", LONG, goal_id="1.2"),
        NewMessage("assistant", "", tool_calls=(call, ToolCall("c2", "grep", "{}"))),
        NewMessage("tool", "found", tool_call_id="c1", name="apply_patch"),
        NewMessage("assistant", "thinking " * 100, kind="thinking"),
        NewMessage("assistant", "sub", agent_name="helper", branch_type="subagent"),
        NewMessage("user", "summary " + LONG, kind="summary"),
    ]
    with store.write() as w:
        tr = w.create_trace("previews", "test", None)
        first = w.append_counted(tr.id, msgs, [5, PENDING_TOKENS, 3, 4, 6, 7, PENDING_TOKENS], None)
        w.set_head(tr.id, first + len(msgs) - 1)
    return tr.id


def test_preview_rows_are_the_rows_of_whole_messages(store: Store) -> None:
    trace_id = _trace(store)
    with store.read() as r:
        segs = r.segments(trace_id)
        whole = r.main_path_page(trace_id, 0, 10, segments=segs)
        previews = r.main_path_previews(trace_id, 0, 10, segs, READ_CHARS)
        tail = r.main_path_previews(trace_id, 2, 3, segs, READ_CHARS)
    assert len(previews) == len(whole) == 7
    assert [row_of(p) for p in previews] == [row_of(m) for m in whole]
    assert all(len(p.content) <= READ_CHARS for p in previews)
    assert previews[1].content == LONG[:READ_CHARS]
    assert previews[2].tool_calls == whole[2].tool_calls
    pending = [p.token_count for p in (previews[1], previews[6])]
    assert PENDING_TOKENS not in pending and pending == [whole[1].token_count, whole[6].token_count]
    assert [p.sequence for p in tail] == [m.sequence for m in whole[2:5]]
