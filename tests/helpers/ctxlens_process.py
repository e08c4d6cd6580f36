"""``ctxlens`` as a real child process (``python -m app`` from the checkout), for tests and
benches that need what only a process gives: a SIGKILL, pipes, exit codes, a fresh
interpreter. One launcher, so every caller runs the same command the same way."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "app", *args]


def child_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``base`` (default: this process's environment) with the checkout importable."""
    return {**(os.environ if base is None else base), "PYTHONPATH": str(ROOT), **extra}


def spawn(*args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``ctxlens ARGS`` with text pipes for stdout and stderr; the caller waits."""
    return subprocess.Popen(
        command(*args),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env) if env is not None else child_env(),
    )


def run(
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    cwd: Path = ROOT,
) -> subprocess.CompletedProcess[str]:
    """``ctxlens ARGS`` to the end: exit code, stdout and stderr as text."""
    return subprocess.run(
        command(*args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(env) if env is not None else child_env(),
        check=False,
    )
