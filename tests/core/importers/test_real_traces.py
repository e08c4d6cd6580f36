"""Every file in shared/traces imports with zero errors, and its counts match what this
test derives from the raw file itself (records, tool calls, compaction markers, subagents).

The expectations below read the source files with plain ``json`` and the mapping rules of
docs/importers.md; they share no code with the importers.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.errors import InvalidInputError
from core.importers.api import import_paths, plan
from core.importers.detect import sniff
from core.store import Store
from tests.conftest import TRACES

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")

CC = TRACES / "claude_code"
CC_META = {"progress", "file-history-snapshot", "queue-operation", "attachment", "last-prompt"}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _tool_messages(store: Store, trace_id: str) -> list[Any]:
    with store.read() as r:
        return [m for m in r.all_messages(trace_id) if m.role == "tool"]


def _messages(store: Store, trace_id: str) -> list[Any]:
    with store.read() as r:
        return list(r.all_messages(trace_id))


# -- Claude Code ------------------------------------------------------------------------
def cc_expected(files: list[Path]) -> dict[str, int]:
    """Counts derived from the raw records. Records that are not conversation (progress,
    hooks, snapshots, system notes) in a row on one lane are one ``meta`` message; a user
    record or the start of a new assistant reply ends the row."""
    msgs = calls = compactions = 0
    agents: set[str] = set()
    for f in files:
        group = None
        lane_group: dict[str, Any] = {}
        in_run: set[str] = set()
        for rec in _jsonl(f):
            kind = rec["type"]
            lane = f"{rec.get('agentId')}" if rec.get("isSidechain") else "main"
            if f.name.startswith("agent-") and "acompact" not in f.name:
                agents.add(rec.get("agentId") or f.stem)
            if kind == "assistant":
                mid = rec["message"].get("id")
                if mid != group:
                    msgs, group = msgs + 1, mid
                if mid != lane_group.get(lane):
                    in_run.discard(lane)
                lane_group[lane] = mid
                content = rec["message"]["content"]
                if isinstance(content, list):
                    calls += sum(1 for b in content if b.get("type") == "tool_use")
            elif kind == "user":
                in_run.discard(lane)
                content = rec["message"]["content"]
                if isinstance(content, str):
                    msgs, group = msgs + 1, None
                else:
                    results = sum(1 for b in content if b.get("type") == "tool_result")
                    other = any(b.get("type") != "tool_result" for b in content)
                    msgs += results + (1 if other or not results else 0)
                    group = group if results else None
                if not isinstance(content, list) or not any(
                    b.get("type") == "tool_result" for b in content
                ):
                    lane_group[lane] = None
            elif kind == "system" and rec.get("subtype") in (
                "compact_boundary",
                "microcompact_boundary",
            ):
                msgs += 1
                compactions += 1
                in_run.discard(lane)
                lane_group[lane] = None
            elif (kind == "system" or kind in CC_META) and lane not in in_run:
                msgs += 1
                in_run.add(lane)
    return {
        "messages": msgs,
        "tool_calls": calls,
        "compactions": compactions,
        "subagents": len(agents),
    }


def cc_files(session: Path) -> list[Path]:
    files = [session, *sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))]
    for flat in sorted(session.parent.glob("agent-*.jsonl")):
        if flat != session and _jsonl(flat)[0].get("sessionId") == session.stem:
            files.append(flat)
    return files


CC_SESSIONS = sorted(p for p in CC.rglob("*.jsonl") if "subagents" not in p.parts)


@pytest.mark.parametrize("session", CC_SESSIONS, ids=lambda p: p.name)
def test_claude_code_session(store: Store, session: Path) -> None:
    (res,) = import_paths(store, [session])
    expected = cc_expected(cc_files(session))
    got = {k: getattr(res, k) for k in expected}
    assert got == expected
    assert res.format == "claude-code"
    msgs = _messages(store, res.trace_id)
    calls = {c.id for m in msgs for c in m.tool_calls}
    assert all(m.tool_call_id in calls for m in msgs if m.role == "tool"), "results pair with calls"
    images = sum(_images(rec) for f in cc_files(session) for rec in _jsonl(f))
    with store.read() as r:
        refs = r.refs(res.trace_id)
    assert len(refs) == images and all(ref.kind == "image" for ref in refs)
    parts = [
        p for m in msgs for p in m.parts or () if isinstance(p, dict) and p.get("type") == "image"
    ]
    assert sorted(p["ref"] for p in parts) == sorted(ref.id for ref in refs)


def _images(rec: dict[str, Any]) -> int:
    content = (
        rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
    )
    if not isinstance(content, list):
        return 0
    n = 0
    for b in content:
        if b.get("type") == "image":
            n += 1
        elif b.get("type") == "tool_result" and isinstance(b.get("content"), list):
            n += sum(1 for x in b["content"] if isinstance(x, dict) and x.get("type") == "image")
    return n


def test_claude_code_usage_counted_once_and_compaction(store: Store) -> None:
    session = (
        CC / "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    )
    (res,) = import_paths(store, [session])
    last_usage: dict[str, int] = {}
    boundary: dict[str, Any] = {}
    summary = ""
    for rec in _jsonl(session):
        if rec["type"] == "assistant":
            last_usage[rec["message"]["id"]] = rec["message"]["usage"]["output_tokens"]
        if rec.get("subtype") == "compact_boundary":
            boundary = rec
        if rec.get("isCompactSummary"):
            summary = rec["message"]["content"]
    msgs = [
        m for m in _messages(store, res.trace_id) if m.role == "assistant" and m.branch_type is None
    ]
    assert sum(m.usage["output_tokens"] for m in msgs) == sum(last_usage.values())
    with store.read() as r:
        (c,) = r.compactions(res.trace_id)
        assert c.tokens_before == boundary["compactMetadata"]["preTokens"]
        assert c.trigger == boundary["compactMetadata"]["trigger"]
        s = r.message(res.trace_id, c.summary_sequence)
        assert s.content == summary and s.kind == "summary" and s.branch_type is None
        # On the main path right after the boundary record, where Claude Code put it into
        # the model's context; the event is anchored at it.
        mark = r.message(res.trace_id, s.parent_sequence)
        assert mark.metadata["subtype"] == "compact_boundary"
        at = r.message(res.trace_id, mark.parent_sequence)
        assert at.metadata["uuid"] == boundary["logicalParentUuid"]
        path = r.main_path_sequences(res.trace_id)
        assert c.at_sequence == c.summary_sequence
        assert path.index(c.summary_sequence) == path.index(mark.sequence) + 1
        assert at.sequence in c.removed
        # the subagent hangs on the assistant message that holds its Task call
        (sub,) = {
            m.branch_id: m for m in r.all_messages(res.trace_id) if m.branch_type == "subagent"
        }.values()
        first = min(
            m.sequence for m in r.all_messages(res.trace_id) if m.branch_id == sub.branch_id
        )
        anchor = r.message(res.trace_id, r.message(res.trace_id, first).parent_sequence)
        assert any(tc.name == "Task" for tc in anchor.tool_calls)


def test_claude_code_rewind_branches_and_head(store: Store) -> None:
    session = next(p for p in CC_SESSIONS if p.name.startswith("0d3a8e6f"))
    (res,) = import_paths(store, [session])
    recs = _jsonl(session)
    children = Counter(r.get("parentUuid") for r in recs if r.get("uuid"))
    forks = [u for u, n in children.items() if u and n > 1]
    with store.read() as r:
        tr = r.trace(res.trace_id)
        head = r.message(res.trace_id, tr.head)
        assert head.metadata["uuid"] == recs[-1]["uuid"], "head = the final leaf"
        lines = r.lines(res.trace_id)
        assert len(lines) - 1 == sum(children[u] - 1 for u in forks)


# -- Codex ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path", sorted((TRACES / "codex").rglob("*.jsonl")), ids=lambda p: p.name[:40]
)
def test_codex_rollout(store: Store, path: Path) -> None:
    (res,) = import_paths(store, [path])
    items = [r["payload"] for r in _jsonl(path) if r["type"] == "response_item"]
    kinds = Counter(i["type"] for i in items)
    calls = sum(
        kinds[k]
        for k in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
    )
    outputs = sum(kinds[k] for k in ("function_call_output", "custom_tool_call_output"))
    users = sum(1 for i in items if i["type"] == "message" and i["role"] == "user")
    compacted = sum(1 for r in _jsonl(path) if r["type"] == "compacted")
    assert (res.tool_calls, res.compactions) == (calls, compacted)
    msgs = _messages(store, res.trace_id)
    assert sum(m.role == "tool" for m in msgs) == outputs
    assert sum(m.role == "user" for m in msgs) == users
    aborted = sum(1 for r in _jsonl(path) if r["payload"].get("type") == "turn_aborted")
    assert sum(m.content.startswith("turn aborted") for m in msgs) == aborted
    texts = [
        t["text"]
        for i in items
        if i["type"] == "message" and i["role"] == "assistant"
        for t in i["content"]
    ]
    stored = "\n".join(m.content for m in msgs if m.role == "assistant")
    assert all(t in stored for t in texts), "every assistant text is kept"
    assert stored.count(texts[0]) == 1, "agent_message events are not shown twice"


# -- OpenHands --------------------------------------------------------------------------
def test_openhands_v0(store: Store) -> None:
    path = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
    (res,) = import_paths(store, [path])
    events = _load(path)
    responses = {
        e["tool_call_metadata"]["model_response"]["id"]: e["tool_call_metadata"]["model_response"]
        for e in events
        if "action" in e and e.get("tool_call_metadata")
    }
    calls = sum(len(r["choices"][0]["message"].get("tool_calls") or []) for r in responses.values())
    observations = sum(1 for e in events if "observation" in e and e.get("tool_call_metadata"))
    plain = sum(1 for e in events if e.get("action") == "message")
    assert res.tool_calls == calls
    assert res.messages == len(responses) + observations + plain
    assert len(_tool_messages(store, res.trace_id)) == observations


def _v1_expected(events: list[dict[str, Any]]) -> dict[str, int]:
    kinds = Counter(e["kind"] for e in events)
    replies = len({e["llm_response_id"] for e in events if e["kind"] == "ActionEvent"})
    other = len(events) - kinds["ActionEvent"]
    return {"tool_calls": kinds["ActionEvent"], "messages": replies + other}


def test_openhands_v1_event_folder(store: Store) -> None:
    folder = next((TRACES / "openhands").rglob("event-00000-*.json")).parent
    (res,) = import_paths(store, [folder])
    events = [_load(p) for p in sorted(folder.glob("event-*.json"))]
    assert {"tool_calls": res.tool_calls, "messages": res.messages} == _v1_expected(events)
    obs = sum(1 for e in events if e["kind"] == "ObservationEvent")
    assert len(_tool_messages(store, res.trace_id)) == obs


def test_openhands_v1_jsonl_and_base_state(store: Store, tmp_path: Path) -> None:
    path = next((TRACES / "openhands").rglob("events.jsonl"))
    (res,) = import_paths(store, [path])
    assert {"tool_calls": res.tool_calls, "messages": res.messages} == _v1_expected(_jsonl(path))
    state = next((TRACES / "openhands").rglob("base_state.json"))
    with pytest.raises(InvalidInputError, match=r"base_state\.json.* without its events; open"):
        import_paths(store, [state])  # settings alone: never a trace with 0 messages
    assert len(store.traces()) == 1
    conv = tmp_path / "conversation"  # the same settings beside real events: one trace
    conv.mkdir()
    shutil.copy(state, conv / "base_state.json")
    events = next((TRACES / "openhands").rglob("event-00000-*.json")).parent
    for p in events.glob("event-*.json"):
        shutil.copy(p, conv / p.name)
    (res2,) = import_paths(store, [conv])
    assert res2.messages > 0
    with store.read() as r:
        meta = r.trace(res2.trace_id).metadata
    assert meta["id"] == _load(state)["id"]
    assert "**********" not in json.dumps(meta) or meta["agent"]["llm"]["api_key"] == "***"


def test_openhands_single_event_file_imports_its_folder(store: Store) -> None:
    one = next((TRACES / "openhands").rglob("event-00003-*.json"))
    (unit,) = plan([one])
    assert unit.path == one.parent and len(unit.files) == len(list(one.parent.glob("event-*")))
    (res,) = import_paths(store, [one])
    events = [_load(p) for p in sorted(one.parent.glob("event-*.json"))]
    assert {"tool_calls": res.tool_calls, "messages": res.messages} == _v1_expected(events)


# -- Inspect ----------------------------------------------------------------------------
def _inspect_samples(path: Path) -> list[dict[str, Any]]:
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    return list(_load(path)["samples"])


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (TRACES / "inspect_ai").rglob("*") if p.suffix in (".eval", ".json")),
    ids=lambda p: p.name[:40],
)
def test_inspect_log(store: Store, path: Path) -> None:
    results = import_paths(store, [path])
    samples = _inspect_samples(path)
    assert len(results) == len(samples)
    got = sorted((r.messages, r.tool_calls, r.llm_calls) for r in results)
    want = []
    for s in samples:
        events = s.get("events") or s.get("transcript", {}).get("events", [])
        calls = sum(len(m.get("tool_calls") or []) for m in s["messages"])
        want.append((len(s["messages"]), calls, sum(e["event"] == "model" for e in events)))
    assert got == sorted(want)


def test_inspect_images_become_refs(store: Store) -> None:
    path = next((TRACES / "inspect_ai").rglob("log_images_tc.json"))
    (res,) = import_paths(store, [path])
    sample = _load(path)["samples"][0]
    images = sum(
        1
        for m in sample["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image"
    )
    with store.read() as r:
        refs = r.refs(res.trace_id)
        assert len(refs) == images and all(
            ref.content and ref.content.startswith("data:image") for ref in refs
        )
        (call,) = r.llm_calls(res.trace_id)
        assert all(i.sequence is not None for i in call.context), (
            "tc:// inputs resolve to stored messages"
        )


# -- OpenTelemetry ----------------------------------------------------------------------
def _otel_expected(path: Path) -> dict[str, int]:
    doc = _load(path)
    if "spans" in doc:
        ops = Counter(s["attributes"].get("gen_ai.operation.name") for s in doc["spans"])
        return {"llm_calls": ops["call_llm"], "tools": ops["execute_tool"]}
    types = Counter(o["type"] for o in doc["observations"])
    return {"llm_calls": types["GENERATION"], "tools": types["TOOL"]}


@pytest.mark.parametrize(
    "path", sorted((TRACES / "otel_genai").rglob("*trace.json")), ids=lambda p: p.name[:40]
)
def test_otel_trace(store: Store, path: Path) -> None:
    (res,) = import_paths(store, [path])
    expected = _otel_expected(path)
    assert res.llm_calls == expected["llm_calls"]
    assert len(_tool_messages(store, res.trace_id)) == expected["tools"]
    with store.read() as r:
        for call in r.llm_calls(res.trace_id):
            assert call.usage and call.usage["input_tokens"] > 0


def test_langfuse_chatml_map_is_refused_not_mistyped(store: Store) -> None:
    """Langfuse's normalised ChatML (observation id -> parsed input/output messages, the
    expected output of its tests) is no trace: detection refuses it by content, and the
    import says what it is, naming the file, and writes nothing (issue 13, finding 4)."""
    path = next((TRACES / "otel_genai").rglob("*.chatml.json"))
    entries = _load(path)
    assert all(set(e) == {"input", "output"} and "success" in e["output"]
               for e in entries.values())  # fmt: skip
    assert sniff(path) is None
    for fmt in ("auto", "otel", "openai"):
        with pytest.raises(InvalidInputError) as err:
            import_paths(store, [path], fmt=fmt)
        text = str(err.value)
        assert text.startswith(f"{path}: a Langfuse ChatML map")
        assert f"from {len(entries)} observations" in text and "not a trace" in text
        assert path.name.replace(".chatml.json", ".trace.json") in text
    with store.read() as r:
        assert r.traces() == []


# -- SWE-agent and OpenAI messages ------------------------------------------------------
@pytest.mark.parametrize(
    "path", sorted((TRACES / "swe_agent").rglob("*.traj*")), ids=lambda p: p.name[:40]
)
def test_swe_agent(store: Store, path: Path) -> None:
    (res,) = import_paths(store, [path])
    doc = _load(path)
    history = doc if isinstance(doc, list) else doc.get("history") or doc.get("messages")
    assert res.messages == len(history)
    assert res.tool_calls == sum(len(m.get("tool_calls") or []) for m in history)
    steps = doc.get("trajectory", []) if isinstance(doc, dict) else []
    with_messages = [s for s in steps if s.get("messages")]
    # no step recorded its context (SWE-agent < 1.0, mini-swe-agent): one call per reply
    replies = [j for j, m in enumerate(history) if m.get("role") == "assistant" and j]
    assert res.llm_calls == (len(with_messages) or len(replies))
    stats = (doc.get("info") or {}).get("model_stats") if isinstance(doc, dict) else None
    if stats and "api_calls" in stats and not with_messages:
        assert res.llm_calls == stats["api_calls"], "the count SWE-agent recorded"
    changes, seen = 0, frozenset()
    for s in with_messages:
        now = frozenset(
            i for i, m in enumerate(s["messages"]) if "lines omitted" in str(m["content"])
        )
        changes += now != seen
        seen = now
    assert res.compactions == changes


@pytest.mark.parametrize(
    "path", sorted((TRACES / "chat_messages").rglob("*.json")), ids=lambda p: p.name[:40]
)
def test_openai_messages(store: Store, path: Path) -> None:
    (res,) = import_paths(store, [path])
    doc = _load(path)
    messages = doc if isinstance(doc, list) else doc["messages"]
    logged = isinstance(doc, dict) and "response" in doc
    assert res.messages == len(messages) + logged
    assert res.llm_calls == int(logged)
    if logged:
        with store.read() as r:
            (call,) = r.llm_calls(res.trace_id)
            assert call.usage["raw"] == doc["response"]["usage"]
            assert call.usage["prompt_tokens"] == doc["response"]["usage"]["prompt_tokens"]
            assert len(call.context) == len(messages)


# -- everything at once -----------------------------------------------------------------
def test_whole_corpus_imports_without_errors(store: Store) -> None:
    results = import_paths(store, [TRACES], stop_on_error=False)
    assert [r.error for r in results if r.error] == []
    planned = {str(u.path) for u in plan([TRACES])}
    assert {r.path for r in results} == planned
    again = import_paths(store, [TRACES])
    assert all(r.duplicate for r in again)
    assert sorted(r.trace_id for r in again) == sorted(r.trace_id for r in results)
