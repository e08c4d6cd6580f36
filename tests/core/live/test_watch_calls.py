"""A watched session records the model calls ``ctxlens import`` records for the same files:
one per API response, with the usage of its last record, linked to the same messages —
also when a response's records arrive in two appends (a Claude Code reply whose content
blocks are written seconds apart, a Codex response whose ``token_count`` comes after its
items), and across restarts (each ``watch --once`` run is one)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from core.cost.totals import catch_up, read_totals
from core.importers.api import import_paths
from core.importers.content import parse_time
from core.store import Store
from tests.conftest import TRACES
from tests.core.live.watch_helpers import Cli, calls, imported_up_to, wait_for, write_turn

SESSION = TRACES / "claude_code/marot__spotter/test/fixtures/transcripts"
SID = "258c7280-ae70-4798-800f-63464d01a85d"
CODEX = {
    "tui-0.125": TRACES / "codex/codemie-ai__codemie-code/src/agents/plugins/codex/__tests__"
    "/fixtures/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    "vscode-0.40": TRACES / "codex/jnarowski__agentcmd/packages/agent-cli-sdk/tests/fixtures"
    "/codex/full/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl",
}
pytestmark = pytest.mark.skipif(not SESSION.is_dir(), reason="shared/traces not present")


def _response(line: bytes) -> str | None:
    """The API response id of a Claude Code reply record (``None``: another record or
    Claude Code's own placeholder reply, which is no model call)."""
    rec = json.loads(line)
    msg = rec.get("message") if rec.get("type") == "assistant" else None
    if not isinstance(msg, dict) or msg.get("model") == "<synthetic>":
        return None
    return str(msg["id"])


def _assistant_messages(store: Store, trace_id: str) -> list[Any]:
    with store.read() as r:
        return [m for m in r.all_messages(trace_id) if m.role == "assistant"]


@dataclass(frozen=True)
class _Compared:
    before_stop: int
    """Calls the store held once the whole file was read, before the stop."""
    watched: list[Any]
    imported: list[Any]
    llm_calls: int
    """The import's own count of its calls."""
    watched_replies: list[Any]
    imported_replies: list[Any]
    watched_limits: dict[str, Any]
    """The limits the tool recorded (``window``, ``limits``) in each trace's metadata."""
    imported_limits: dict[str, Any]


def _watch_then_import(
    tmp_path: Path, root: str, under: str, src: Path, pieces: list[list[bytes]]
) -> _Compared:
    """``pieces`` of ``src`` appended to a copy under ``root/under`` while ``ctxlens watch
    root`` runs (``_follow``), then the whole copy imported into a store of its own: the
    calls and assistant messages of both."""
    folder = tmp_path / root / under
    folder.mkdir(parents=True)
    live_file = folder / src.name
    live_file.touch()
    db = tmp_path / "live.db"
    before_stop = _follow(db, tmp_path / root, live_file, pieces)
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [live_file])
        (trace,) = live.traces()
        (done,) = [t for t in full.traces() if t.id == res.trace_id]
        return _Compared(
            before_stop,
            calls(live, trace.id),
            calls(full, res.trace_id),
            res.llm_calls,
            _assistant_messages(live, trace.id),
            _assistant_messages(full, res.trace_id),
            _limits(trace.metadata),
            _limits(done.metadata),
        )


def _limits(metadata: Any) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k in ("window", "limits")}


def _follow(db: Path, watched: Path, live_file: Path, pieces: list[list[bytes]]) -> int:
    """``ctxlens watch`` as a real process while ``pieces`` are appended to ``live_file``
    one by one, each first line in two writes, with a pause after each (a batch ends);
    then stopped as a user stops it (SIGTERM). Returns how many calls the store held once
    the whole file was read, before the stop."""
    cli = Cli("--db", str(db), "watch", str(watched), "--json", "--interval", "0.02")
    for piece in pieces:
        write_turn(live_file, piece)
        time.sleep(0.1)
    size = live_file.stat().st_size
    wait_for(lambda: imported_up_to(db, live_file) == size)
    with Store.open(db) as store:
        (trace,) = store.traces()
        before = len(calls(store, trace.id))
    err = cli.stop()
    assert cli.proc.returncode == 0 and "Traceback" not in err, err
    return before


def test_a_watched_claude_code_session_records_the_calls_of_its_import(tmp_path: Path) -> None:
    src = SESSION / f"{SID}.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    # Cut after the first record of every other response that has more records: the rest
    # of the response comes in the next append (Claude Code writes a reply's content
    # blocks as they complete, up to a minute apart in this very session).
    records = Counter(_response(line) for line in lines)
    pieces: list[list[bytes]] = [[]]
    seen: list[str] = []
    for line in lines:
        pieces[-1].append(line)
        rid = _response(line)
        if rid and records[rid] > 1 and rid not in seen:
            seen.append(rid)
            if len(seen) % 2:
                pieces.append([])
    got = _watch_then_import(tmp_path, "projects", "p", src, pieces)
    assert got.watched == got.imported
    assert len(got.watched) == len([r for r in records if r]) == 152
    # the last reply's end-of-turn record (stop_hook_summary) closed it: no stop needed
    assert got.before_stop == 152
    # the case this test is about happened: a response written as two messages
    split = Counter(m.metadata["message_id"] for m in got.watched_replies)
    assert max(split.values()) > 1
    # the auto-compact point the session showed (its one auto boundary) is noted too
    assert got.watched_limits == got.imported_limits == {"limits": {"auto_compact_tokens": 167094}}


def _timestamps(path: Path) -> Iterator[tuple[float, int, str, bytes]]:
    """A file's lines keyed by time (a line without one, or one earlier than the line
    before it, keeps the time before it: the file's own order is kept)."""
    when = 0.0
    for n, line in enumerate(path.read_bytes().splitlines(keepends=True)):
        when = max(when, parse_time(json.loads(line).get("timestamp")) or 0.0)
        yield when, n, str(path), line


def test_watch_once_records_each_call_once_across_restarts(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    """The session and its subagent files written record by record in time order, a
    ``watch --once`` run after each cut. A cut right after a response's last record leaves
    it open (nothing after it in its lane yet): the run's end records its call, and the
    next run, continuing the trace, does not record it again."""
    src = SESSION / f"{SID}.jsonl"
    agents = sorted((SESSION / SID / "subagents").glob("agent-*.jsonl"))
    stream = sorted(line for p in (src, *agents) for line in _timestamps(p))
    last = {_response(line): i for i, (_, _, _, line) in enumerate(stream)}
    ends = sorted(i for rid, i in last.items() if rid is not None)
    in_agent = [i for i in ends if stream[i][2] != str(src)]
    cuts = sorted({*ends[10 :: len(ends) // 5], in_agent[0]})
    assert len(cuts) >= 5
    projects = tmp_path / "projects"
    folder = projects / "p"
    (folder / SID / "subagents").mkdir(parents=True)
    db = tmp_path / "live.db"
    start = 0
    for cut in [*cuts, len(stream) - 1]:
        for _, _, path, line in stream[start : cut + 1]:
            target = folder / Path(path).relative_to(SESSION)
            with target.open("ab") as out:
                out.write(line)
        started = {_response(line) for _, _, _, line in stream[: cut + 1]} - {None}
        start = cut + 1
        assert cli("--db", str(db), "watch", str(projects), "--once", "--json")[0] == 0
        with Store.open(db) as live:
            (trace,) = live.traces()
            assert len(calls(live, trace.id)) == len(started)  # each once, none waiting

    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [folder])
        watched = calls(live, trace.id)
        imported = calls(full, res.trace_id)
        assert len(imported) == 156
        assert sorted(watched, key=repr) == sorted(imported, key=repr)


def test_a_response_cut_by_a_stop_gets_its_final_usage_when_the_watch_resumes(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    """Claude Code writes a response's usage on each of its records, the output tokens
    final only on the last (10 on the first records of one response, 441 on its last). A
    ``watch --once`` that stops after a response's first record records its call as it
    stands, marked open (``usage.open_at_stop``): the output tokens may still grow. The
    next run reads the rest of the response and sets the call's usage to the final one,
    so once the file is whole every call equals the import's, the mark gone."""
    src = SESSION / f"{SID}.jsonl"
    lines = [line for line in src.read_bytes().splitlines(keepends=True) if line.strip()]
    ids = [_response(line) for line in lines]
    counts = Counter(i for i in ids if i is not None)
    firsts = [n for n, i in enumerate(ids) if i is not None and counts[i] > 1 and ids.index(i) == n]
    cuts = firsts[5::12]
    assert len(cuts) >= 5
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    live_file = folder / src.name
    db = tmp_path / "live.db"
    start = 0
    for cut in [*cuts, len(lines) - 1]:
        with live_file.open("ab") as out:
            out.writelines(lines[start : cut + 1])
        start = cut + 1
        assert cli("--db", str(db), "watch", str(folder.parent), "--once", "--json")[0] == 0
        with Store.open(db) as live:
            (trace,) = live.traces()
            with live.read() as r:
                last = r.llm_calls(trace.id)[-1]
            if cut != len(lines) - 1:  # the cut response's call, as it stood at the stop
                assert last.usage["open_at_stop"] is True
            if cut == cuts[0]:  # what the CLI and the scrubber say of it meanwhile
                _open_call_is_said(cli, db, trace.id, last.call_index)
            catch_up(live)  # the Traces pane's sums, as a window open meanwhile reads them
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [live_file])
        watched, imported = calls(live, trace.id), calls(full, res.trace_id)
        assert len(imported) == 152
        assert watched == imported
        with live.read() as r:
            assert not [c.call_index for c in r.llm_calls(trace.id) if "open_at_stop" in c.usage]
        catch_up(live)
        catch_up(full)
        with live.read() as r, full.read() as f:
            sums = [(x.completion, x.prompt) for x in read_totals(r.conn, [trace.id])]
            assert sums == [(x.completion, x.prompt) for x in read_totals(f.conn, [res.trace_id])]


def _open_call_is_said(
    cli: Callable[..., tuple[int, str]], db: Path, trace_id: str, index: int
) -> None:
    from core.inspector.playback import call_detail
    from core.replay.playback import Playback

    code, out = cli("--db", str(db), "context", trace_id, "--call", str(index), "--json")
    assert code == 0, out
    recorded = json.loads(out)["recorded"]
    assert recorded["output_open_at_stop"] is True and recorded["output_tokens"] < 20
    code, out = cli("--db", str(db), "context", trace_id, "--call", str(index))
    assert "tokens (as of the watch's stop: the response was still being written)" in out
    with Store.open(db) as live, live.read() as r:
        pb = Playback.open(r, trace_id)
        detail = call_detail(pb.state(r, len(pb) - 1))
    assert "tokens out (as of the watch's stop: the response was still being written)" in detail


def _codex_pieces(lines: list[bytes]) -> list[list[bytes]]:
    """A rollout cut inside its responses, about 45 times: after an output item that
    another follows, before a ``token_count``, and after a ``token_count`` that its
    response's items follow (Codex 0.40 logs the usage first)."""
    kinds = []
    for line in lines:
        rec = json.loads(line)
        payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else {}
        out = rec.get("type") == "response_item" and (
            payload.get("type") in ("reasoning", "function_call", "custom_tool_call")
            or payload.get("role") == "assistant"
        )
        kinds.append("output" if out else payload.get("type"))
    inside = [i for i in range(1, len(lines)) if kinds[i - 1] == kinds[i] == "output"]
    before_usage = [i for i in range(1, len(lines)) if kinds[i] == "token_count"]
    after_usage = [
        i for i in range(1, len(lines)) if kinds[i - 1] == "token_count" and kinds[i] == "output"
    ]
    cuts = sorted(
        {
            *inside[:: max(1, len(inside) // 18)],
            *before_usage[1::4][:18],
            *after_usage[:: max(1, len(after_usage) // 10)],
        }
    )
    return [lines[a:b] for a, b in zip([0, *cuts], [*cuts, len(lines)], strict=True)]


@pytest.mark.parametrize("version", sorted(CODEX))
def test_a_watched_codex_rollout_records_the_calls_of_its_import(
    version: str, tmp_path: Path
) -> None:
    src = CODEX[version]
    pieces = _codex_pieces(src.read_bytes().splitlines(keepends=True))
    got = _watch_then_import(tmp_path, "sessions", "2026/05/11", src, pieces)
    assert got.watched == got.imported
    assert len(got.watched) == got.llm_calls > 60
    # 0.125 ends its last response with a token_count; 0.40 wrote the usage before the
    # items, so nothing closes its last response: the stop recorded its call
    assert got.before_stop == len(got.watched) - (version == "vscode-0.40")
    # the case this test is about happened: a response written as two messages
    assert len(got.watched_replies) > len(got.imported_replies)
    # the window the rollout recorded (model_context_window) is noted as the import notes it
    assert got.watched_limits == got.imported_limits
    assert got.watched_limits["window"]["field"] == "model_context_window"


def _watch_once_after_each(
    cli: Callable[..., tuple[int, str]], tmp_path: Path, src: Path, pieces: list[list[bytes]]
) -> tuple[Path, Path]:
    """``pieces`` of ``src`` appended to a copy one by one, a ``watch --once`` run after
    each (it stops there); the store and the copy."""
    folder = tmp_path / "sessions" / "2026"
    folder.mkdir(parents=True)
    live_file = folder / src.name
    db = tmp_path / "live.db"
    for piece in pieces:
        with live_file.open("ab") as out:
            out.writelines(piece)
        assert cli("--db", str(db), "watch", str(folder.parent), "--once", "--json")[0] == 0
    return db, live_file


@pytest.mark.parametrize("version", sorted(CODEX))
def test_watch_once_cut_inside_codex_responses_records_the_import_calls(
    cli: Callable[..., tuple[int, str]], version: str, tmp_path: Path
) -> None:
    """Each piece of ``_codex_pieces`` (cut inside responses and before their
    ``token_count``) followed by a ``watch --once`` run, which stops there: a call kept at
    a stop before its ``token_count`` gets that usage when a later run reads it, so the
    calls are the import's (before, such a call kept no usage at all)."""
    src = CODEX[version]
    pieces = _codex_pieces(src.read_bytes().splitlines(keepends=True))
    db, live_file = _watch_once_after_each(cli, tmp_path, src, pieces)
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [live_file])
        (trace,) = live.traces()
        assert calls(live, trace.id) == calls(full, res.trace_id)
        assert res.llm_calls > 60


def test_a_call_kept_at_a_stop_before_its_items_has_the_rollouts_time(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    """Live review: Codex 0.40 logs a response's ``token_count`` before its items; a watch
    stopped between the two kept the call with the stop's wall clock (2026-12-07 against
    the rollout's 2025-09-25), and the export carried it, and the response read by the
    next run was never linked to the call. The call has the time its ``token_count`` was
    logged, as the rollout's own times go, and its response once read."""
    src = CODEX["vscode-0.40"]
    lines = src.read_bytes().splitlines(keepends=True)
    kinds = [json.loads(line).get("payload", {}).get("type") for line in lines]
    cut = next(
        i
        for i in range(1, len(lines))
        if kinds[i - 1] == "token_count" and kinds[i] in ("reasoning", "message", "function_call")
    )
    db, live_file = _watch_once_after_each(cli, tmp_path, src, [lines[:cut], lines[cut:]])
    with Store.open(db) as live, Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [live_file])
        (trace,) = live.traces()
        with live.read() as r, full.read() as f:
            watched = [(c.created_at, c.usage) for c in r.llm_calls(trace.id)]
            imported = [(c.created_at, c.usage) for c in f.llm_calls(res.trace_id)]
        # and its response, when the next run reads it, is linked to the call
        assert calls(live, trace.id) == calls(full, res.trace_id)
    stamps = json.loads(lines[cut - 1])["timestamp"]
    assert stamps.startswith("2025-") and len(watched) == len(imported)
    assert [w[0] for w in watched] == [i[0] for i in imported]
    assert all(abs(w[0] - i[0]) < 1 for w, i in zip(watched, imported, strict=True))


def test_a_subagent_file_that_settles_first_waits_for_the_task_call_that_names_it(
    tmp_path: Path,
) -> None:
    """Live review: Claude Code writes the ``Task`` call that starts a subagent a few
    milliseconds before the subagent's first line, then goes on writing progress records.
    The session file kept growing, so the watch held its newest lines, and read the agent
    file (which had settled) first: the subagent's lane opened without its ``Task`` call and
    kept the file's name, ``agent-a881341``, for good, where the import says
    ``claude-code-guide``. The agent file now waits for the line that names it."""
    from core.live import watch

    src = SESSION / f"{SID}.jsonl"
    agent_src = SESSION / SID / "subagents" / "agent-a881341.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    task = next(n for n, line in enumerate(lines) if b'"subagent_type":"claude-code-guide"' in line)
    agent_lines = agent_src.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "projects" / "p"
    (folder / SID / "subagents").mkdir(parents=True)
    main, agent = folder / src.name, folder / SID / "subagents" / agent_src.name
    main.write_bytes(b"".join(lines[:task]))
    with Store.open(tmp_path / "live.db") as store:
        w = watch.Watcher(store, [folder.parent])
        w.poll()
        w.poll()  # the session so far is written
        time.sleep(watch.RESCAN)  # the next poll looks for new files
        with main.open("ab") as f:
            f.write(lines[task])  # the Task call
        agent.write_bytes(b"".join(agent_lines[:2]))  # the agent starts
        w.poll()  # both are new or grew: held until they settle
        with main.open("ab") as f:
            f.write(lines[task + 1])  # a progress record: the session is still growing
        time.sleep(watch.SETTLE)
        w.poll()  # the agent file has settled, the session file has not
        time.sleep(watch.SETTLE)
        w.poll()
        with main.open("ab") as f:
            f.writelines(lines[task + 2 :])
        agent.write_bytes(agent_src.read_bytes())
        w.poll(drain=True)
        (trace,) = store.traces()
        watched = {m.agent_name for m in _messages(store, trace.id) if m.branch_id == "a881341"}
    with Store.open(tmp_path / "full.db") as full:
        (res,) = import_paths(full, [folder])
        imported = {m.agent_name for m in _messages(full, res.trace_id) if m.branch_id == "a881341"}
    assert watched == imported == {"claude-code-guide"}


def _messages(store: Store, trace_id: str) -> list[Any]:
    with store.read() as r:
        return list(r.all_messages(trace_id))
