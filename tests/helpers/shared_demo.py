"""One demo run per test session, shared by every xdist worker: the first worker to ask
runs it (under a file lock) into a folder next to the workers' temp dirs; each test gets
its own copy of the store file (checkpoint blobs included), so tests never interfere."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest

from core.demo.scenario import DemoOptions, run_demo
from core.store import Store


def shared_demo(factory: pytest.TempPathFactory, name: str = "demo", **opts: object) -> Path:
    """The folder holding ``demo.db`` (checkpoint blobs inside) and ``result.json``."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # workers' temp dirs sit in the session's
        base = base.parent
    root = base / f"ctxlens-shared-{name}"
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "result.json"
        if not done.exists():
            with Store.open(root / "demo.db") as store:
                result = run_demo(store, DemoOptions(**opts))  # type: ignore[arg-type]
            done.write_text(json.dumps(result))
    return root


def demo_copy(factory: pytest.TempPathFactory, dest: Path, name: str = "demo") -> tuple[Path, str]:
    """A private copy of the shared demo store: ``(db path, trace id)``."""
    root = shared_demo(factory, name)
    dest.mkdir(parents=True, exist_ok=True)
    db = dest / "demo.db"
    shutil.copy(root / "demo.db", db)  # one file: its checkpoint blobs are inside
    return db, json.loads((root / "result.json").read_text())["trace_id"]
