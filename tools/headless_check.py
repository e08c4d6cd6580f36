"""Run core's tests in a fresh venv without PySide6 (proves core never needs Qt).

Installs the project with ``--no-deps`` and then only the dependencies listed above the
``# gui`` marker in pyproject.toml, plus the ``dev`` extra's test tools core's tests use
(``test_requirements``: the PostgreSQL driver and moto's S3 server, the provider SDKs, the
OpenTelemetry exporter: core's suites run against real servers and clients here too).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-headless"
#: Developer tools core's tests do not use (the GUI plugin and the linters).
NOT_FOR_CORE_TESTS = ("pytest-qt", "ruff", "mypy", "import-linter")


def core_requirements() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    head = block.split("# gui", 1)[0]
    return re.findall(r'"([^"]+)"', head)


def test_requirements() -> list[str]:
    """The ``dev`` extra (real servers' drivers, provider SDKs, the OpenTelemetry exporter
    …) without the GUI test plugin and the linters: one list to keep, in pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("\ndev = [", 1)[1].split("\n]", 1)[0]
    names = re.findall(r'"([^"]+)"', block)
    return [n for n in names if not n.startswith(NOT_FOR_CORE_TESTS)]


def main() -> int:
    py = VENV / "bin" / "python"
    if not py.exists():
        venv.create(VENV, with_pip=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--no-deps", "-e", str(ROOT)], check=True)
    subprocess.run([*pip, *core_requirements(), *test_requirements()], check=True)
    probe = subprocess.run([str(py), "-c", "import PySide6"], capture_output=True)
    if probe.returncode == 0:
        print("headless venv unexpectedly has PySide6", file=sys.stderr)
        return 1
    env = {**os.environ, "CTXLENS_HEADLESS": "1"}
    return subprocess.run(
        [str(py), "-m", "pytest", "-q", "-n", "2", "-p", "no:pytestqt", "tests/core", "tests/app"],
        cwd=ROOT,
        env=env,
    ).returncode


if __name__ == "__main__":
    raise SystemExit(main())
