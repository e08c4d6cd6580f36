"""What ``Writer.append`` returns and stores (issue 20: its records are built from the
messages' own values, its tool calls encoded by ``json``'s C encoder built once)."""

from __future__ import annotations

import json
import random
from typing import Any

from sqlalchemy import text

from core.records import NewMessage, ToolCall
from core.store import Store
from core.store.message_fields import appended, message_of_row
from core.store.writer import _json_exact


def _messages() -> list[NewMessage]:
    return [
        NewMessage("system", "root", metadata={"k": [1, None, "x"]}),
        NewMessage(
            "assistant",
            "",
            tool_calls=(
                ToolCall("c1", "read", '{"p": "é\\u2028"}'),
                ToolCall("c2", "write", "{}"),
            ),
            parts=({"type": "thinking", "thinking": "é"},),
            usage={"input_tokens": 5},
        ),
        NewMessage("tool", "out", tool_call_id="c1", name="read", goal_id="1.1"),
        NewMessage("assistant", "side", branch_type="compression", branch_id="b1"),
        NewMessage("user", "given", token_count=7, created_at=12.5, agent_name="sub"),
    ]


def test_append_returns_what_the_store_reads_back(store: Store) -> None:
    tr = store.create_trace("t")
    with store.write() as w:
        written = w.append(tr.id, _messages()[:3])
        written += w.append(tr.id, _messages()[3:4], parent=1)
        written += w.append(tr.id, _messages()[4:], parent=2)
    with store.read() as r:
        back = [r.message(tr.id, m.sequence) for m in written]
    assert written == back
    assert [m.line for m in written] == [0, 0, 0, 1, 0] and written[3].depth == 2


def test_append_stores_tool_calls_as_json_dumps_writes_them(store: Store) -> None:
    """Runs' calls keep ``json.dumps``' text (``Reader.search`` finds ``"name": "x"``)."""
    tr = store.create_trace("t")
    calls = _messages()[1].tool_calls
    store.append(tr.id, _messages()[:3])
    with store.engine.connect() as conn:
        stored = conn.execute(
            text(
                "SELECT CAST(tool_calls AS TEXT) FROM messages WHERE trace_id = :t AND sequence = 1"
            ),
            {"t": tr.id},
        ).scalar()
    assert stored == json.dumps([c.to_json() for c in calls])
    with store.read() as r:
        assert r.search(tr.id, tool_name="write") == [1]


def test_records_a_codec_would_change_take_the_decoding_path() -> None:
    """A list of parts or a call whose fields are not strings: the record is the one read
    back from the row, as before (tuples, argument text)."""
    odd: Any = ToolCall("c1", "read", {"p": 1})  # type: ignore[arg-type]
    nm = NewMessage("assistant", "", parts=[{"a": 1}], tool_calls=(odd,))  # type: ignore[arg-type]
    row, record = appended(("t", 3, 2, 0, 3), nm, 5, 1.0)
    assert record == message_of_row(row)
    assert record.parts == ({"a": 1},) and record.tool_calls == (
        ToolCall("c1", "read", '{"p": 1}'),
    )
    plain = NewMessage("tool", "x", tool_call_id="c", created_at=2.0)
    row, record = appended(("t", 4, 3, 0, 4), plain, 5, 1.0)
    assert record == message_of_row(row) and record.created_at == 2.0


def test_json_exact_is_json_dumps() -> None:
    rnd = random.Random(20)
    values: list[Any] = [
        [],
        [{"id": "\ud800", "name": '\x00\x1f"\\', "arguments": {"k": [1, 2.5, None, 2**70]}}],
        [{"f": float("nan"), "g": -0.0, "h": 1e300, "i": True}],
        {"not": "a list"},
    ]
    for _ in range(500):
        s = "".join(chr(rnd.randrange(0, 0x2FFFF)) for _ in range(rnd.randrange(0, 10)))
        values.append([{"id": s, "name": s[::-1], "arguments": json.dumps({"s": s})}])
    for value in values:
        assert _json_exact(value) == json.dumps(value)
    assert _json_exact(None) is None
