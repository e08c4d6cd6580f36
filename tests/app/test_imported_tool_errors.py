"""Tool errors an imported file recorded are findable and shown (``has:error``, the
timeline's error badge), as the runtime's own tool errors are. Expected counts come from
the raw Inspect log (plain ``json``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.inspector.timeline import PREVIEW_CHARS, row_of
from core.store import Store
from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]
LOG = TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log"
ERRORS = LOG / "log_tool_call_error.json"
CLEAN = LOG / "log_images_tc.json"


def _raw_errors(path: Path) -> int:
    log = json.loads(path.read_text(encoding="utf-8"))
    return sum(
        1
        for s in log.get("samples") or []
        for m in s.get("messages") or []
        if m.get("role") == "tool" and m.get("error")
    )


@pytest.mark.skipif(not (ERRORS.is_file() and CLEAN.is_file()), reason="no shared traces")
def test_has_error_finds_an_import_with_tool_errors_and_rows_carry_the_badge(
    cli: Cli, store_path: Path
) -> None:
    assert _raw_errors(ERRORS) > 0 and _raw_errors(CLEAN) == 0
    code, out = cli("--db", str(store_path), "import", str(ERRORS), str(CLEAN), "--json")
    assert code == 0, out
    code, out = cli("--db", str(store_path), "search", "has:error", "--json")
    assert code == 0, out
    with Store.open(str(store_path)) as store:
        traces = store.traces()
        with store.read() as r:
            badged: dict[str, int] = {}
            for tr in traces:
                segs = r.segments(tr.id, tr.head)
                n = r.main_path_length(tr.id)
                rows = [row_of(p) for p in r.main_path_previews(tr.id, 0, n, segs, PREVIEW_CHARS)]
                badged[tr.id] = sum("error" in row.badges for row in rows)
    hits = {h["trace_id"] for h in json.loads(out)["hits"]}
    erring = {tid for tid, n in badged.items() if n}
    assert hits == erring and len(erring) == 1, "the trace with errors, not the clean one"
    assert sum(badged.values()) == _raw_errors(ERRORS)
