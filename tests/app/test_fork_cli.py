"""``ctxlens fork TRACE --at SEQ --content-file F``: the edited message in a new trace,
recorded replies while the context is the recorded one, the scripted model after the
edit (or a stop), the source untouched, bad input as one line with exit 2."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from core.store import Store
from tests.helpers.shared_demo import demo_copy

EDIT = '{"summary": {"day": 1, "header": "# events day 01 (edited: a quiet day)"}}'


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return demo_copy(tmp_path_factory, tmp_path_factory.mktemp("fork"))


def _cli(*args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, json.loads(out.getvalue()) if code == 0 and out.getvalue() else {}


def _first_tool_result(db: Path, trace: str) -> int:
    with Store.open(db) as s, s.read() as r:
        return next(
            m.sequence for m in r.iter_main_path(trace) if m.role == "tool" and m.sequence > 8
        )


def test_fork_continues_with_the_scripted_model_after_the_edit(
    demo: tuple[Path, str], tmp_path: Path
) -> None:
    db, source = demo
    seq = _first_tool_result(db, source)
    edit = tmp_path / "edit.txt"
    edit.write_text(EDIT, encoding="utf-8")
    with Store.open(db) as s, s.read() as r:
        original = r.message(source, seq)
    code, out = _cli("--db", str(db), "fork", source, "--at", str(seq),
                     "--content-file", str(edit), "--json", "--compare")  # fmt: skip
    assert code == 0
    new = out["trace_id"]
    assert out["forked_at"] == seq and out["edited"]["sequence"] == seq
    assert out["edited"]["tokens_before"] == original.token_count
    assert out["divergence"]["reason"].startswith("the context differs")
    assert out["diverged_at"] == out["from_call"] and out["live_replies"] > 0
    assert out["stopped"] == "done" and out["comparison"]["main_calls"]["b"] > 0
    with Store.open(db) as s, s.read() as r:
        edited = r.message(new, seq)
        assert edited.content == EDIT and edited.metadata["edited"]["original_tokens"] > 0
        assert r.message(source, seq).content == original.content, "the source is untouched"
        assert r.trace(new).metadata["replay_of"]["edited_sequence"] == seq
        before = [m.content for m in r.iter_main_path(source) if m.sequence < seq]
        assert [m.content for m in r.iter_main_path(new) if m.sequence < seq] == before


def test_fork_stops_without_a_model_and_bad_input_is_one_line(
    demo: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, source = demo
    seq = _first_tool_result(db, source)
    f = tmp_path / "edit.txt"
    f.write_text(EDIT, encoding="utf-8")
    code, out = _cli("--db", str(db), "fork", source, "--at", str(seq),
                     "--content-file", str(f), "--model", "stop", "--json")  # fmt: skip
    assert code == 0 and out["stopped"] == "diverged" and out["live_replies"] == 0
    with Store.open(db) as s, s.read() as r:
        last = max(m.sequence for m in r.iter_main_path(source))
    for args, says in [
        (["--at", str(seq), "--content-file", str(tmp_path / "missing.txt")], "missing.txt"),
        (["--at", "999999", "--content-file", str(f)], "999999"),
        (["--at", str(last), "--content-file", str(f)], "nothing to continue"),
    ]:
        capsys.readouterr()
        assert main(["--db", str(db), "fork", source, *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err


def _sample(tmp_path: Path) -> tuple[Path, str, int]:
    from tests.sample_trace import write_sample

    db = tmp_path / "sample.db"
    with Store.open(db) as s:
        write_sample(s)
        trace = s.traces()[0].id
        with s.read() as r:
            user = next(m.sequence for m in r.iter_main_path(trace) if m.role == "user")
    return db, trace, user


def test_fork_with_model_endpoint_continues_on_the_configured_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--model endpoint``: after the edit the configured endpoint answers; the fork
    records its replies with the usage and model it reported, and never its key."""
    from tests.helpers.loopback_endpoint import ANSWER, MODEL, USAGE, loopback_endpoint

    db, source, seq = _sample(tmp_path)
    edit = tmp_path / "edit.txt"
    edit.write_text("Plan a different trip instead.", encoding="utf-8")
    with loopback_endpoint() as (endpoint, env):
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        code, out = _cli("--db", str(db), "fork", source, "--at", str(seq),
                         "--content-file", str(edit), "--model", "endpoint", "--json")  # fmt: skip
    assert code == 0
    assert (
        out["live_replies"] > 0
        and out["continued_with"] == f"model {MODEL} at {env['CTXLENS_BASE_URL']}"
    )
    assert endpoint.requests, "the endpoint was called"
    sent = endpoint.requests[0].messages
    assert any(m.get("content") == "Plan a different trip instead." for m in sent)
    with Store.open(db) as s, s.read() as r:
        calls = r.llm_calls(out["trace_id"])
        answers = [m.content for m in r.iter_main_path(out["trace_id"]) if m.role == "assistant"]
    assert calls and all(c.model == MODEL and c.usage == USAGE for c in calls)
    assert ANSWER in answers
    for stored in (p for p in db.parent.glob(db.name + "*") if p.is_file()):
        assert b"sk-test-loopback-secret" not in stored.read_bytes(), stored


def test_fork_with_model_endpoint_unconfigured_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db, source, seq = _sample(tmp_path)
    edit = tmp_path / "edit.txt"
    edit.write_text("x", encoding="utf-8")
    for key in ("CTXLENS_BASE_URL", "CTXLENS_MODEL"):
        monkeypatch.delenv(key, raising=False)
    args = ["--db", str(db), "fork", source, "--at", str(seq), "--content-file", str(edit)]
    assert main([*args, "--model", "endpoint"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "CTXLENS_BASE_URL" in err
    with Store.open(db) as s:
        assert len(s.traces()) == 1, "no fork was made"
