"""Issue 13's "Done when", file by file: EVERY file under shared/traces, imported alone
through ``ctxlens import FILE --json`` (as a user opens one file), exports per-call recorded
prompt tokens equal to an independent sum from the raw file (``expected_prompts``: plain
``json``, no importer code), and ``ctxlens context --json`` shows no budget the trace did not
have. A file that is not a trace is skipped with the reason the import gives; so a file
added to shared/traces is checked without editing this test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.errors import InvalidInputError
from core.importers.api import plan_paths
from tests.conftest import TRACES
from tests.core.importers.test_imported_calls import RUNTIME_LIMITS, expected_prompts

FILES = sorted(p for p in TRACES.rglob("*") if p.is_file()) if TRACES.is_dir() else []
Cli = Callable[..., tuple[int, str]]


def _json(cli: Cli, *argv: str) -> Any:
    code, out = cli(*argv)
    assert code == 0, out
    return json.loads(out)


@pytest.mark.skipif(not FILES, reason="shared/traces not present")
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TRACES)))
def test_recorded_prompts_of_every_real_file(cli: Cli, tmp_path: Path, path: Path) -> None:
    try:
        plan_paths([path])
    except InvalidInputError as exc:
        pytest.skip(f"not a trace: {exc}")
    db = str(tmp_path / "s.db")
    rows = _json(cli, "--db", db, "import", str(path), "--json")
    assert rows, "a trace file gives at least one trace"
    got: list[int] = []
    for row in rows:
        doc = _json(cli, "--db", db, "export", row["trace_id"], "--format", "json")
        for call in doc["llm_calls"]:
            if call["usage"] is not None:
                got.append(call["usage"]["prompt_tokens"])
        ctx = _json(cli, "--db", db, "context", row["trace_id"], "--json")
        assert not RUNTIME_LIMITS & set(ctx["limits"]), f"a runtime budget: {ctx['limits']}"
        assert ctx["window"]["source"] in {"trace", "model-table", "unknown"}
        meta = doc["trace"]["metadata"] or {}
    files = meta.get("files") or [str(path)]
    want = expected_prompts(rows[0]["format"], Path(rows[0]["path"]), {"files": files})
    if want is None:
        assert got == [], "usage the file does not record"
    else:
        assert sorted(got) == sorted(want)


def test_the_walk_compares_real_usage() -> None:
    """The file-by-file test is not vacuous: most traces record per-call usage, and those
    that do not are the formats (or versions) that record none per call."""
    compared, empty = 0, []
    for path in FILES:
        try:
            (unit, *_) = plan_paths([path]).units
        except InvalidInputError:
            continue
        want = expected_prompts(unit.format, unit.path, {"files": [str(p) for p in unit.files]})
        if want:
            compared += 1
        else:
            empty.append(path.name)
    assert compared >= 18, empty  # 18 of the 38 trace files on 2 Dec 2026
