"""A probe run in a fresh interpreter with a bare environment (only ``PATH`` and the
repository on ``PYTHONPATH``, Qt offscreen unless told otherwise): what a new process
imports or does, unaffected by this test process's modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def last_value(code: str, *, offscreen: bool = True, timeout: float = 120) -> Any:
    """Run ``code`` in a new Python; the value of the last line it printed (a literal)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    if offscreen:
        env["QT_QPA_PLATFORM"] = "offscreen"
    res = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    assert res.returncode == 0, res.stderr
    return ast.literal_eval(res.stdout.strip().splitlines()[-1])
