"""``ctxlens serve --model`` as a real process: an OpenAI-compatible endpoint that fails the
way providers do for the requests ``--fault`` names, driven with the official openai SDK."""

from __future__ import annotations

import subprocess
import sys

import openai
import pytest

from core.errors import CtxlensError
from core.llm.fault_spec import parse_fault
from tests.core.live.watch_helpers import REPO, Cli, wait_for
from tests.helpers.ctxlens_process import run as ctxlens_run


def _listening(cli: Cli) -> dict:
    wait_for(lambda: any(line.get("source") == "model" for line in cli.lines))
    return next(line for line in cli.lines if line.get("source") == "model")


def test_faults_fail_the_next_requests_then_the_model_answers(tmp_path):
    cli = Cli(
        "--db",
        str(tmp_path / "s.db"),
        "serve",
        "--model",
        "127.0.0.1:0",
        "--json",
        "--fault",
        "rate_limited:7*2",
        "--fault",
        "overloaded@other-model",
    )
    try:
        ready = _listening(cli)
        assert ready["faults"] == ["rate_limited:7*2", "overloaded@other-model"]
        client = openai.OpenAI(base_url=ready["base_url"], api_key="unused", max_retries=0)
        ask = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}
        for _ in range(2):
            with pytest.raises(openai.RateLimitError) as err:
                client.chat.completions.create(**ask)
            assert err.value.response.headers["retry-after"] == "7"
        reply = client.chat.completions.create(**ask)
        assert reply.choices[0].message.content == "echo: hello"
        # the overload waits for its model, streamed
        with pytest.raises(openai.APIStatusError) as err:
            list(client.chat.completions.create(**{**ask, "model": "other-model"}, stream=True))
        assert err.value.status_code == 529
        chunks = client.chat.completions.create(**{**ask, "model": "other-model"}, stream=True)
        assert (
            "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "echo: hello"
        )
        wait_for(lambda: len([x for x in cli.lines if x.get("event") == "request"]) == 5)
    finally:
        cli.stop()
    served = [
        (x["model"], x["status"], x["fault"]) for x in cli.lines if x.get("event") == "request"
    ]
    assert served == [
        ("gpt-4o", 429, "http_error"),
        ("gpt-4o", 429, "http_error"),
        ("gpt-4o", 200, None),
        ("other-model", 529, "http_error"),
        ("other-model", 200, None),
    ]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("explode", "unknown fault 'explode'"),
        ("slow:soon", "argument 1 is 'soon', expected a number"),
        ("slow:2,later", "expected one of headers, stream"),
        ("prompt_too_long:gemini", "expected one of openai, anthropic"),
        ("overloaded:3", "overloaded"),
        ("rate_limited*0", "at least 1"),
        ("rate limited", "expected NAME"),
    ],
)
def test_a_bad_fault_is_named_and_nothing_starts(tmp_path, spec, says):
    with pytest.raises(CtxlensError, match="--fault"):
        parse_fault(spec)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "app",
            "--db",
            str(tmp_path / "s.db"),
            "serve",
            "--model",
            "127.0.0.1:0",
            "--fault",
            spec,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert says in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "s.db").exists()


def test_serve_needs_a_source(tmp_path):
    done = ctxlens_run("--db", str(tmp_path / "s.db"), "serve", timeout=60)
    assert done.returncode == 2 and "--otlp" in done.stderr and "--model" in done.stderr
