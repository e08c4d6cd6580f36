"""Imported traces carry the model calls their tools recorded, with true numbers (issue 13).

Every real trace in shared/traces is imported and exported through the CLI. For each, the
per-call recorded prompt tokens of the export are compared with a sum this test computes
from the raw file with plain ``json`` (no importer code): Claude Code's input + cache read +
cache creation per ``message.id``, Codex's ``last_token_usage.input_tokens`` per
``token_count`` event, Inspect's model-event usage, OpenTelemetry span attributes, the
LiteLLM log's response usage, OpenHands' ``model_response`` usage. Then ``ctxlens context
--json`` must give the window from the trace or the model table (never the runtime's
128k/32k/40k), and the recorded / reconstructed / unexplained keys.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.context.view import current_items, request_sha256, resolve
from core.store import Store
from tests.app.test_openhands_usage_real import stats_calls
from tests.conftest import TRACES

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")
Cli = Callable[..., tuple[int, str]]
RUNTIME_LIMITS = {"soft budget", "hard budget", "compaction threshold"}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


# -- independent sums from the raw files ---------------------------------------------------
def cc_prompts(files: list[str]) -> list[int]:
    """Per API response (message.id; the last streamed record holds the final usage)."""
    out: list[int] = []
    for f in files:
        last: dict[str, dict[str, Any]] = {}
        for rec in _jsonl(Path(f)):
            msg = rec.get("message") or {}
            if rec.get("type") == "assistant" and msg.get("model") != "<synthetic>":
                last[msg["id"]] = msg["usage"]
        out += [
            u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
            for u in last.values()
        ]
    return out


def codex_prompts(path: Path) -> list[int]:
    """One per ``token_count`` event whose running total moved (cached tokens are part of
    OpenAI's input)."""
    out, total = [], None
    for rec in _jsonl(path):
        p = rec.get("payload") or {}
        info = p.get("info") if p.get("type") == "token_count" else None
        if info and info.get("last_token_usage") and info["total_token_usage"] != total:
            total = info["total_token_usage"]
            out.append(info["last_token_usage"]["input_tokens"])
    return out


def codex_window(path: Path) -> int:
    windows = [
        (r.get("payload", {}).get("info") or {}).get("model_context_window")
        for r in _jsonl(path)
        if r.get("payload", {}).get("type") == "token_count"
    ]
    return [w for w in windows if w][-1]


def inspect_prompts(path: Path) -> list[int]:
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as z:
            samples = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("samples/")]
    else:
        samples = json.loads(path.read_text(encoding="utf-8")).get("samples") or []
    out = []
    for s in samples:
        events = s.get("events") or (s.get("transcript") or {}).get("events") or []
        for ev in events:
            usage = (ev.get("output") or {}).get("usage") if ev.get("event") == "model" else None
            if usage:
                out.append(usage["input_tokens"])
    return out


def otel_prompts(path: Path) -> list[int]:
    """LLM spans' recorded input tokens (any-agent and OpenInference attributes; Langfuse
    generations' usage details)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(doc, dict) and "observations" in doc:
        return [
            int(o["usageDetails"]["input"])
            for o in doc["observations"]
            if o.get("type") == "GENERATION" and (o.get("usageDetails") or {}).get("input")
        ]
    out = []
    for span in doc if isinstance(doc, list) else doc.get("spans", []):
        a = span.get("attributes") or {}
        value = a.get("gen_ai.usage.input_tokens", a.get("llm.token_count.prompt"))
        if value is not None:
            out.append(int(value))
    return out


def openhands_prompts(path: Path) -> list[int]:
    seen: dict[str, int] = {}
    for ev in json.loads(path.read_text(encoding="utf-8")):
        resp = (ev.get("tool_call_metadata") or {}).get("model_response") or {}
        if resp.get("usage"):
            seen[resp["id"]] = resp["usage"]["prompt_tokens"]
    return list(seen.values())


def expected_prompts(fmt: str, path: Path, meta: dict[str, Any]) -> list[int] | None:
    """The recorded prompt tokens of each call, from the raw file (``None``: the format
    records no per-call usage here)."""
    if fmt == "claude-code":
        return cc_prompts(meta["files"])
    if fmt == "codex":
        return codex_prompts(path)
    if fmt == "inspect":
        return inspect_prompts(path)
    if fmt == "otel":
        return otel_prompts(path)
    if fmt == "openai":
        doc = json.loads(path.read_text(encoding="utf-8"))
        usage = (doc.get("response") or {}).get("usage") if isinstance(doc, dict) else None
        return [usage["prompt_tokens"]] if usage else []
    if fmt == "openhands" and path.suffix == ".json" and path.name != "base_state.json":
        return openhands_prompts(path)
    if fmt == "openhands":  # V1: the calls the conversation's stats updates record
        files = sorted(path.glob("event-*.json")) if path.is_dir() else [path]
        lines = [ln for f in files for ln in f.read_text(encoding="utf-8").splitlines()]
        events = [json.loads(ln) for ln in lines if ln.strip()] if path.suffix == ".jsonl" \
            else [json.loads(f.read_text(encoding="utf-8")) for f in files]  # fmt: skip
        return [p for p, _, _, _ in stats_calls(events)] or None
    return None


# -- the imports ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    import io

    from app.cli import main

    db = tmp_path_factory.mktemp("calls") / "store.db"
    out = io.StringIO()
    folders = sorted(str(p) for p in TRACES.iterdir() if p.is_dir())
    assert main(["--db", str(db), "import", *folders, "--json"], out=out) == 0
    return db, json.loads(out.getvalue())


def _export(cli: Cli, db: Path, trace_id: str) -> dict[str, Any]:
    code, out = cli("--db", str(db), "export", trace_id, "--format", "json")
    assert code == 0
    return json.loads(out)


def _context(cli: Cli, db: Path, trace_id: str, *call: str) -> dict[str, Any]:
    code, out = cli("--db", str(db), "context", trace_id, *call, "--json")
    assert code == 0
    return json.loads(out)


def test_recorded_prompt_tokens_equal_the_raw_files(
    cli: Cli, imported: tuple[Path, list[dict[str, Any]]]
) -> None:
    db, rows = imported
    by_file: dict[tuple[str, str], list[int]] = {}
    checked = set()
    for row in rows:
        doc = _export(cli, db, row["trace_id"])
        calls = doc["llm_calls"]
        for c in calls:
            usage = c["usage"]
            if usage is not None:
                assert usage["raw"] and usage["normalized"] is True
                assert set(usage) >= {"prompt_tokens", "completion_tokens", "cached_tokens"}
                assert "cache_creation_tokens" in usage
        got = [c["usage"]["prompt_tokens"] for c in calls if c["usage"] is not None]
        by_file.setdefault((row["format"], row["path"]), []).extend(got)
        meta = doc["trace"]["metadata"] or {}
        checked.add((row["format"], row["path"], json.dumps(meta.get("files"))))
    tested = 0
    for fmt, path, files in checked:
        meta = {"files": json.loads(files)} if files != "null" else {}
        want = expected_prompts(fmt, Path(path), meta)
        got = by_file[(fmt, path)]
        if want is None:
            assert got == [], f"{path}: usage the file does not record"
            continue
        assert sorted(got) == sorted(want), path
        tested += bool(want)
    assert tested >= 14, "every family with per-call usage was compared"


def test_claude_code_calls_in_order_with_cache_tokens(
    cli: Cli, imported: tuple[Path, list[dict[str, Any]]]
) -> None:
    db, rows = imported
    (row,) = [r for r in rows if r["path"].endswith("258c7280-ae70-4798-800f-63464d01a85d.jsonl")]
    doc = _export(cli, db, row["trace_id"])
    main = [c for c in doc["llm_calls"] if c["agent_name"] == "main"]
    assert [c["usage"]["prompt_tokens"] for c in main] == cc_prompts([row["path"]])
    assert len(main) == 152 and row["llm_calls"] == len(doc["llm_calls"])
    last = main[-1]["usage"]
    assert last["cached_tokens"] == last["raw"]["cache_read_input_tokens"]
    assert last["cache_creation_tokens"] == last["raw"]["cache_creation_input_tokens"]
    ctx = _context(cli, db, row["trace_id"], "--call", str(main[-1]["call_index"]))
    assert ctx["recorded"]["prompt_tokens"] == last["prompt_tokens"]
    assert ctx["recorded"]["cached_tokens"] == last["cached_tokens"]
    assert ctx["recorded"]["output_tokens"] == last["completion_tokens"]
    assert ctx["reconstructed_tokens"] == ctx["tokens"]["total"]
    assert ctx["unexplained_tokens"] == last["prompt_tokens"] - ctx["tokens"]["total"] > 0
    assert ctx["context"] == "reconstructed"


def test_windows_come_from_the_trace_or_the_model_table(
    cli: Cli, imported: tuple[Path, list[dict[str, Any]]]
) -> None:
    db, rows = imported
    sources = {}
    for row in rows:
        ctx = _context(cli, db, row["trace_id"])
        window = ctx["window"]
        assert window["source"] in {"trace", "model-table", "unknown"}, row["path"]
        assert not RUNTIME_LIMITS & set(ctx["limits"]), f"{row['path']}: a runtime budget"
        if window["source"] == "unknown":
            assert window["tokens"] is None
        sources[row["path"]] = window
        if row["format"] == "codex":
            assert window == {"tokens": codex_window(Path(row["path"])), "source": "trace"}
        if row["format"] == "claude-code" and row["llm_calls"]:
            assert window == {"tokens": 200_000, "source": "model-table"}
    assert {w["source"] for w in sources.values()} == {"trace", "model-table", "unknown"}
    (cc,) = [r for r in rows if r["path"].endswith("258c7280-ae70-4798-800f-63464d01a85d.jsonl")]
    limits = _context(cli, db, cc["trace_id"])["limits"]
    assert limits == {"auto-compact point": 167_094, "window": 200_000}


def test_reconstructed_contexts_are_the_views_at_their_heads(
    imported: tuple[Path, list[dict[str, Any]]],
) -> None:
    """The importer's in-memory path and incremental hash agree with the View and
    ``request_sha256`` computed from the store for every reconstructed call."""
    db, rows = imported
    seen = 0
    with Store.open(db) as s, s.read() as r:
        for row in rows:
            for call in r.llm_calls(row["trace_id"]):
                if (call.params or {}).get("context") != "reconstructed":
                    continue
                if call.agent_name == "main" and call.branch_type is None:
                    items, _ = current_items(r, row["trace_id"], call.head_sequence)
                    assert call.context == items, (row["path"], call.call_index)
                view = resolve(r, row["trace_id"], call.context)
                assert call.request_sha256 == request_sha256(view.openai())
                seen += 1
    assert seen > 300


def test_claude_code_boundary_carries_the_recorded_tokens(
    imported: tuple[Path, list[dict[str, Any]]],
) -> None:
    """Before: ``compactMetadata.preTokens``; after: the prompt of the first API response
    after the ``compact_boundary`` record (both recorded by Claude Code, not counted)."""
    from core.inspector.bands import band_text

    db, rows = imported
    (row,) = [r for r in rows if r["path"].endswith("258c7280-ae70-4798-800f-63464d01a85d.jsonl")]
    records = _jsonl(Path(row["path"]))
    (at,) = [n for n, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
    pre = records[at]["compactMetadata"]["preTokens"]
    u = next(r["message"]["usage"] for r in records[at:] if r.get("type") == "assistant")
    after = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
    with Store.open(db) as s, s.read() as r:
        (ev,) = r.compactions(row["trace_id"])
    assert (ev.tokens_before, ev.tokens_after) == (pre, after)
    assert ev.details["tokens_recorded"] == {"before": True, "after": True}
    assert band_text(ev).endswith(f"{pre:,} → {after:,} tokens (recorded)")


def test_request_hashes_hold_when_few_messages_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The renderer's message cache is bounded; with a tiny bound (dropped between calls,
    read ahead by eight) every hash still equals the one computed from the store."""
    from core.importers.api import import_paths
    from core.importers.calls import ContextHashes

    monkeypatch.setattr(ContextHashes, "KEEP", 3)
    monkeypatch.setattr(ContextHashes, "AHEAD", 8)
    path = TRACES / "codex/jnarowski__agentcmd/packages/agent-cli-sdk/tests/fixtures/codex/full"
    with Store.open(tmp_path / "s.db") as s:
        (res,) = import_paths(s, sorted(path.glob("rollout-*.jsonl")))
        with s.read() as r:
            calls = r.llm_calls(res.trace_id)
            for call in calls:
                view = resolve(r, res.trace_id, call.context)
                assert call.request_sha256 == request_sha256(view.openai())
    assert len(calls) == res.llm_calls > 100


@pytest.mark.parametrize("limit", [10**9, 50])
def test_claude_code_replies_past_the_context_limit_become_no_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """Replies whose rebuilt contexts cannot fit together are not kept while reading (memory
    stays constant in the file size); the import says so and records no call, as before."""
    from core.importers.api import import_paths
    from core.importers.base import TraceBuilder

    fixture = Path(__file__).parents[2] / "fixtures" / "claude_code" / "session.jsonl"
    monkeypatch.setattr(TraceBuilder, "REPLY_CONTEXT_LIMIT", limit)
    with Store.open(tmp_path / "s.db") as store:
        (res,) = import_paths(store, [fixture])
    said = [w for w in res.warnings if "not stored as calls" in w]
    if limit > 1000:
        assert res.llm_calls > 0 and not said
    else:
        assert res.llm_calls == 0 and len(said) == 1
        assert "model calls not stored as calls" in said[0]
