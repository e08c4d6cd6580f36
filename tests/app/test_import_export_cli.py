"""``ctxlens import`` / ``ctxlens export --format otlp`` through the real CLI entry point."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CONTRACT = {
    "path",
    "format",
    "trace_id",
    "messages",
    "tool_calls",
    "compactions",
    "subagents",
    "warnings",
}
Cli = Callable[..., tuple[int, str]]


def test_import_json_contract_and_reimport(cli: Cli, store_path: Path) -> None:
    code, out = cli("--db", str(store_path), "import", str(FIX / "claude_code"), "--json")
    assert code == 0
    rows = json.loads(out)
    assert {Path(r["path"]).name for r in rows} == {
        "session.jsonl",
        "sess-2.jsonl",
        "agent-lone01.jsonl",
    }
    assert all(set(r) >= CONTRACT for r in rows)
    session = next(r for r in rows if r["path"].endswith("session.jsonl"))
    assert (session["format"], session["compactions"], session["subagents"]) == (
        "claude-code",
        2,
        1,
    )
    code, out = cli("--db", str(store_path), "import", str(FIX / "claude_code"), "--json")
    again = json.loads(out)
    assert code == 0 and all(r["duplicate"] for r in again)
    assert sorted(r["trace_id"] for r in again) == sorted(r["trace_id"] for r in rows)
    code, out = cli("--db", str(store_path), "traces", "--json")
    assert len(json.loads(out)) == len(rows)


def test_import_stores_every_token_count(cli: Cli, store_path: Path) -> None:
    """The whole ``ctxlens import``: counts counted while reading, none left pending, each
    the one ``count_message`` gives for the stored message (TOK-1)."""
    from core.store import Store
    from core.store.triggers import PENDING_TOKENS
    from core.tokens.counter import TokenCounter

    code, out = cli("--db", str(store_path), "import", str(FIX / "claude_code"), "--json")
    assert code == 0
    counter = TokenCounter()
    with Store.open(str(store_path)) as store, store.read() as r:
        r.count_pending = False
        for row in json.loads(out):
            msgs = r.all_messages(row["trace_id"])
            assert msgs and all(m.token_count != PENDING_TOKENS for m in msgs)
            for m in msgs:
                want = (
                    0
                    if m.kind == "meta"
                    else counter.count_message(m.role, m.content, m.tool_calls, m.name).tokens
                )
                assert m.token_count == want


def test_import_with_forced_format(cli: Cli, store_path: Path) -> None:
    code, out = cli(
        "--db",
        str(store_path),
        "import",
        "--format",
        "codex",
        str(FIX / "codex/rollout-compacted.jsonl"),
        "--json",
    )
    assert code == 0 and json.loads(out)[0]["format"] == "codex"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"type":"user","uuid":"a","sessionId":"s","message":{"role":"user","content":"hi"}}\n{"type":',
            r"t\.jsonl:2: invalid JSON",
        ),
        ("plain text\n", r"t\.jsonl: not a trace file of a known format"),
    ],
)
def test_import_errors_exit_2_without_traceback(
    cli: Cli,
    store_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    message: str,
) -> None:
    bad = tmp_path / "t.jsonl"
    bad.write_text(content)
    code, out = cli("--db", str(store_path), "import", str(bad), "--json")
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert re.search(message, err), err
    if out:
        assert json.loads(out) == []


def test_import_missing_path(
    cli: Cli, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = cli("--db", str(store_path), "import", "/nonexistent/x.jsonl")
    assert code == 2 and "/nonexistent/x.jsonl: no such file or folder" in capsys.readouterr().err


def test_a_bad_file_does_not_stop_the_good_ones(
    cli: Cli, store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('[{"role": "user", "content": "hi"}, {"role": "wizard", "content": "x"}]')
    code, out = cli("--db", str(store_path), "import", str(bad), str(FIX / "openai"), "--json")
    assert code == 2
    assert "broken.json: messages[1]: unknown message role 'wizard'" in capsys.readouterr().err
    assert len(json.loads(out)) == 2


def test_export_otlp_is_valid_otlp_json(cli: Cli, store_path: Path, tmp_path: Path) -> None:
    json_format = pytest.importorskip("google.protobuf.json_format")
    trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
    code, out = cli("--db", str(store_path), "import", str(FIX), "--json")
    assert code == 0
    for row in json.loads(out):
        target = tmp_path / f"{row['trace_id']}.json"
        code, _ = cli(
            "--db",
            str(store_path),
            "export",
            row["trace_id"],
            "--format",
            "otlp",
            "-o",
            str(target),
        )
        assert code == 0
        request = json_format.Parse(target.read_text(), trace_service.ExportTraceServiceRequest())
        spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
        attrs = [{a.key: a.value for a in s.attributes} for s in spans]
        ops = [a["gen_ai.operation.name"].string_value for a in attrs]
        assert ops.count("invoke_agent") == 1 + row["subagents"]
        assert ops.count("execute_tool") == sum(
            1 for s in _tool_results(store_path, row["trace_id"])
        )
        # OTLP/JSON writes ids as hex (a documented deviation from the proto3 mapping,
        # which would read them as base64), so they are checked on the raw document
        raw = json.loads(target.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
        assert len({s["traceId"] for s in raw}) == 1
        assert all(re.fullmatch(r"[0-9a-f]{32}", s["traceId"]) for s in raw)
        assert all(re.fullmatch(r"[0-9a-f]{16}", s["spanId"]) for s in raw)
        parents = {s["spanId"] for s in raw}
        assert all(s.get("parentSpanId", parents and next(iter(parents))) in parents for s in raw)


def _tool_results(store_path: Path, trace_id: str) -> list[int]:
    from core.store import Store

    with Store.open(store_path) as s, s.read() as r:
        return [
            m.sequence for m in r.all_messages(trace_id) if m.role == "tool" and m.kind != "meta"
        ]


def test_otlp_export_imports_back(cli: Cli, store_path: Path, tmp_path: Path) -> None:
    code, out = cli(
        "--db", str(store_path), "import", str(FIX / "otel/otlp-semconv.json"), "--json"
    )
    (row,) = json.loads(out)
    target = tmp_path / "round.json"
    assert (
        cli(
            "--db",
            str(store_path),
            "export",
            row["trace_id"],
            "--format",
            "otlp",
            "-o",
            str(target),
        )[0]
        == 0
    )
    other = tmp_path / "other.db"
    code, out = cli("--db", str(other), "import", str(target), "--json")
    (back,) = json.loads(out)
    assert code == 0 and back["format"] == "otel"
    assert (back["tool_calls"], back["messages"], back["llm_calls"]) == (
        row["tool_calls"],
        row["messages"],
        row["llm_calls"],
    )
