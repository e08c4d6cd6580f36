"""Run core's tests in a fresh venv without PySide6 (proves core never needs Qt).

Installs the project with ``--no-deps`` and then only the dependencies listed above the
``# gui`` marker in pyproject.toml, plus the test tools core's tests use (including the
PostgreSQL driver and moto's S3 server: the store suite runs against real servers here too).
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
#: The store suite also runs on real PostgreSQL and S3 servers (driver + moto's server).
SERVER_TEST_REQUIREMENTS = ["psycopg[binary]>=3.1", "moto[server]>=5.0"]
#: The recording proxy's tests drive it with the real provider SDKs (issue 16).
SDK_TEST_REQUIREMENTS = ["openai>=1.50", "anthropic>=0.40"]


def core_requirements() -> list[str]:
    text = (ROOT / "pyproject.toml").read_text()
    block = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    head = block.split("# gui", 1)[0]
    return re.findall(r'"([^"]+)"', head)


def main() -> int:
    py = VENV / "bin" / "python"
    if not py.exists():
        venv.create(VENV, with_pip=True)
    pip = [str(py), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "--no-deps", "-e", str(ROOT)], check=True)
    tools = ["pytest", "pytest-xdist", "hypothesis", *SERVER_TEST_REQUIREMENTS]
    tools += SDK_TEST_REQUIREMENTS
    subprocess.run([*pip, *core_requirements(), *tools], check=True)
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
