"""The real Claude Code and Codex CLIs through ``ctxlens proxy``, each when installed
(``claude`` / ``codex`` on PATH, or ``CLAUDE_CODE_BIN`` / ``CODEX_BIN``; ``npm install
@anthropic-ai/claude-code @openai/codex`` puts them there), against the fake upstream."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.core.proxy.conftest import context
from tests.helpers.proxy_process import ProxyProcess
from tests.servers.fake_upstream import FakeUpstream, Reply

CLAUDE = os.environ.get("CLAUDE_CODE_BIN") or shutil.which("claude")
CODEX = os.environ.get("CODEX_BIN") or shutil.which("codex")
KEY = "sk-ant-fake-cc-0123456789"


@pytest.mark.skipif(CLAUDE is None, reason="Claude Code is not installed")
def test_claude_code_print_mode_is_recorded_exactly(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path, tmp_path: Path
) -> None:
    upstream.replies.extend([Reply("Hello from the fake model.")] * 4)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": proxy.url,
        "ANTHROPIC_API_KEY": KEY,
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }
    assert CLAUDE is not None
    done = subprocess.run(
        [CLAUDE, "-p", "Say hello", "--model", "claude-sonnet-4-5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello from the fake model." in done.stdout
    event = proxy.calls(1)[0]
    assert (event["api"], event["outcome"]) == ("anthropic", "done")
    sent = next(r for r in upstream.requests if r.path == "/v1/messages")
    ctx = context(db, event["trace"], event["call"])
    assert ctx["proxy_request"]["body"].encode() == sent.body, "recorded byte for byte"
    assert ctx["request_sha256"] == ctx["recorded_sha256"]
    body = json.loads(sent.body)
    assert ctx["messages"][0]["role"] == "system" and body["system"]
    assert ctx["messages"][-1]["role"] == "user" and "Say hello" in ctx["messages"][-1]["content"]
    proxy.stop()
    for path in db.parent.glob("proxy.db*"):
        assert KEY.encode() not in path.read_bytes()


@pytest.mark.skipif(CODEX is None, reason="Codex is not installed")
def test_codex_exec_is_recorded_exactly(
    proxy: ProxyProcess, upstream: FakeUpstream, db: Path, tmp_path: Path
) -> None:
    upstream.replies.extend([Reply("Hello from the fake model.")] * 4)
    env = {**os.environ, "CODEX_HOME": str(tmp_path), "OPENAI_API_KEY": KEY}
    provider = (
        f'model_providers.ctx={{name="ctx",base_url="{proxy.url}/v1",wire_api="responses",'
        'env_key="OPENAI_API_KEY"}'
    )
    assert CODEX is not None
    done = subprocess.run(
        [
            CODEX,
            "exec",
            "--skip-git-repo-check",
            "-c",
            provider,
            "-c",
            "model_provider=ctx",
            "-m",
            "gpt-5",
            "Say hello",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "Hello from the fake model." in done.stdout
    event = proxy.calls(1)[0]
    assert (event["api"], event["outcome"]) == ("responses", "done")
    ctx = context(db, event["trace"], event["call"])
    sent = next(r for r in upstream.requests if r.path == "/v1/responses")
    assert ctx["proxy_request"]["body"].encode() == sent.body
    assert ctx["messages"][0]["role"] == "system"
    assert any("Say hello" in str(m["content"]) for m in ctx["messages"] if m["role"] == "user")
    proxy.stop()
    for path in db.parent.glob("proxy.db*"):
        assert KEY.encode() not in path.read_bytes()
