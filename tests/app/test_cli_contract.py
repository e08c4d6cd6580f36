"""The CLI contract of the foundation: traces, show, context, rewind, export (keys stable)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from core.context.view import request_sha256
from core.records import CompactionEvent, ContextItem, LlmCall, NewMessage, ToolCall
from core.store import Store
from tests.helpers.ctxlens_process import run

ROOT = Path(__file__).resolve().parents[2]
Cli = Callable[..., tuple[int, str]]


def build(db: Path) -> str:
    """A small trace with a tool call, a side branch, a recorded call and a compaction."""
    with Store.open(db) as s, s.write() as w:
        tr = w.create_trace("contract", metadata={"window": 16000})
        msgs = w.append(
            tr.id,
            [
                NewMessage("system", "You are a test agent."),
                NewMessage("user", "Read the file."),
                NewMessage(
                    "assistant", "", tool_calls=(ToolCall("c1", "read", '{"p":"a"}'),), goal_id="1"
                ),
                NewMessage(
                    "tool", "file contents " * 30, tool_call_id="c1", name="read", goal_id="1"
                ),
                NewMessage("assistant", "Done reading.", goal_id="1"),
            ],
        )
        w.append(
            tr.id,
            [
                NewMessage(
                    "assistant", "summary", kind="summary", branch_type="compression", branch_id="c"
                )
            ],
            parent=4,
        )
        items = tuple(ContextItem(m.sequence) for m in msgs[:4])
        from core.context.view import resolve

        view = resolve(w.read, tr.id, items)
        w.record_llm_call(
            LlmCall(tr.id, 0, items, request_sha256(view.openai()), "m", 3, response_sequence=4)
        )
        w.record_compaction(
            CompactionEvent(
                tr.id,
                "micro",
                4,
                removed=(3,),
                context_after=(
                    ContextItem(0),
                    ContextItem(1),
                    ContextItem(2),
                    ContextItem(3, content="[Previous: used read]"),
                    ContextItem(4),
                ),
                tokens_before=100,
                tokens_after=20,
                messages_before=5,
                messages_after=5,
            )
        )
        w.append(tr.id, [NewMessage("user", "Next question")])
        return tr.id


def test_traces_json(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = build(db)
    code, out = cli("--db", str(db), "traces", "--json")
    assert code == 0
    (row,) = json.loads(out)
    assert {"id", "title", "source", "created_at", "messages", "head"} <= set(row)
    assert (row["id"], row["messages"], row["head"]) == (tid, 7, 6)


def test_show_json_main_path_and_in_context(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = build(db)
    code, out = cli("--db", str(db), "show", tid[:6], "--json")
    assert code == 0
    data = json.loads(out)
    assert data["trace"]["id"] == tid
    msgs = data["messages"]
    assert [m["sequence"] for m in msgs] == [0, 1, 2, 3, 4, 6], "side branch is off the path"
    keys = {
        "sequence",
        "parent_sequence",
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "goal_id",
        "branch_type",
        "agent_name",
        "kind",
        "token_count",
        "in_context",
    }
    assert all(keys <= set(m) for m in msgs)
    assert msgs[2]["tool_calls"] == [{"id": "c1", "name": "read", "arguments": '{"p":"a"}'}]
    assert all(m["in_context"] for m in msgs)


def test_context_at_call_matches_recorded_hash(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = build(db)
    code, out = cli("--db", str(db), "context", tid, "--call", "0", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["call"] == 0
    assert [m["role"] for m in data["messages"]] == ["system", "user", "assistant", "tool"]
    assert data["messages"][2]["tool_calls"][0]["function"]["name"] == "read"
    assert data["request_sha256"] == data["recorded_sha256"]
    blob = json.dumps(data["messages"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert data["request_sha256"] == hashlib.sha256(blob.encode()).hexdigest()
    assert data["tokens"]["total"] == sum(data["tokens"]["by_component"].values())


def test_context_window_source_keeps_issue_13s_values(cli: Cli, tmp_path: Path) -> None:
    """``window.source`` is one of ``trace``, ``model-table``, ``config``, ``unknown``
    (issue 13): a ctxlens run's window is ``config`` whether the trace recorded its budget
    or runs on the defaults; ``recorded`` tells the two apart."""
    db = tmp_path / "s.db"
    bare = build(db)  # no budget in its metadata: the runtime's defaults
    with Store.open(db) as s, s.write() as w:
        tr = w.create_trace("budgeted", metadata={"budget": {"context_window": 50000}})
        w.append(tr.id, [NewMessage("system", "s"), NewMessage("user", "u")])
        budgeted = tr.id
    seen = {}
    for tid in (bare, budgeted):
        code, out = cli("--db", str(db), "context", tid, "--json")
        assert code == 0, out
        seen[tid] = json.loads(out)["window"]
    assert seen[bare] == {"tokens": 128000, "source": "config", "recorded": False}
    assert seen[budgeted] == {"tokens": 50000, "source": "config", "recorded": True}


def test_context_next_call_applies_the_compaction(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = build(db)
    code, out = cli("--db", str(db), "context", tid, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["call"] is None
    contents = [m["content"] for m in data["messages"]]
    assert "[Previous: used read]" in contents
    assert contents[-1] == "Next question"
    assert data["tokens"]["by_component"]["system"] > 0


def test_rewind_json_then_show(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = build(db)
    code, out = cli("--db", str(db), "rewind", tid, "--to", "2", "--json")
    assert code == 0
    res = json.loads(out)
    assert (res["from"], res["to"], res["main_path_length"]) == (6, 2, 3)
    _, out = cli("--db", str(db), "show", tid, "--json")
    assert [m["sequence"] for m in json.loads(out)["messages"]] == [0, 1, 2]
    # rewinding before the compaction boundary brings the original message back
    _, out = cli("--db", str(db), "rewind", tid, "--to", "3", "--json")
    _, out = cli("--db", str(db), "context", tid, "--json")
    assert "file contents" in json.loads(out)["messages"][-1]["content"]


def test_export_import_export_is_identical(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tid = build(db)
    with Store.open(db) as s, s.write() as w:
        w.write_checkpoint(tid, 0, "turn", b'{"state": 1}', token_count=5)
        w.add_goal_event(
            __import__("core.records", fromlist=["GoalEvent"]).GoalEvent(
                tid, 2, "add", "1", {"description": "read"}
            )
        )
    first = tmp_path / "a.json"
    assert cli("--db", str(db), "export", tid, "--format", "json", "-o", str(first))[0] == 0
    other = tmp_path / "other.db"
    code, out = cli("--db", str(other), "import", str(first), "--json")
    assert code == 0, out
    assert json.loads(out)[0]["trace_id"] == tid
    second = tmp_path / "b.json"
    assert cli("--db", str(other), "export", tid, "-o", str(second))[0] == 0
    assert first.read_bytes() == second.read_bytes()
    data = json.loads(first.read_text())
    assert len(data["messages"]) == 7 and len(data["llm_calls"]) == 1
    assert len(data["compactions"]) == 1 and len(data["checkpoints"]) == 1


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return run(*args)


def _assert_one_line_error(res: subprocess.CompletedProcess[str], needle: str) -> None:
    assert res.returncode == 2, res
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr and needle in lines[0]


@pytest.mark.parametrize(
    "content",
    [b"this is not a database\n" * 10, b"\x00" * 4096, b"SQLite format 3\x00" + b"\xff" * 4080],
)
def test_bad_db_file_is_a_clear_error_and_untouched(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "bad.db"
    db.write_bytes(content)
    res = _run("--db", str(db), "traces", "--json")
    _assert_one_line_error(res, str(db))
    assert db.read_bytes() == content


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    build(db)
    con = sqlite3.connect(db)
    con.execute("UPDATE alembic_version SET version_num = '9999_future'")
    con.commit()
    con.close()
    before = db.read_bytes()
    res = _run("--db", str(db), "traces")
    _assert_one_line_error(res, "newer")
    assert db.read_bytes() == before


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    before = db.read_bytes()
    _assert_one_line_error(_run("--db", str(db), "traces"), "not a ctxlens store")
    assert db.read_bytes() == before


def test_missing_trace_and_message(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    build(db)
    _assert_one_line_error(_run("--db", str(db), "show", "nosuchtrace"), "nosuchtrace")
    tid = Store.open(db).traces()[0].id
    _assert_one_line_error(_run("--db", str(db), "rewind", tid, "--to", "999"), "999")
    _assert_one_line_error(_run("--db", str(db), "context", tid, "--call", "7"), "call 7")
    _assert_one_line_error(_run("--db", str(tmp_path / "none.db"), "traces"), "does not exist")
