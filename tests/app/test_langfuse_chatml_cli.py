"""Issue 13, finding 4 through the CLI: Langfuse's normalised ChatML of a trace is refused
with what it is (never imported as an OTel trace), and the Langfuse trace exports beside it
still import as they did: their calls and tool results as the raw files hold them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import TRACES

FOLDER = TRACES / "otel_genai/langfuse__langfuse/worker/src/__tests__/chatml/framework-traces"
CHATML = FOLDER / "claude-agent-2025-12-22.chatml.json"
pytestmark = pytest.mark.skipif(not CHATML.is_file(), reason="shared traces not present")
Cli = Callable[..., tuple[int, str]]


def test_chatml_is_refused_by_name(
    cli: Cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    observations = len(json.loads(CHATML.read_text(encoding="utf-8")))
    for forced in ((), ("--format", "otel")):
        code, _ = cli("--db", db, "import", str(CHATML), *forced)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err
        assert f"{CHATML}: a Langfuse ChatML map" in err and "not a trace" in err
        assert f"{observations} observations" in err and "claude-agent-2025-12-22.trace.json" in err
    assert not Path(db).exists(), "refused before anything was written"


def test_the_trace_exports_beside_it_still_import(cli: Cli, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    code, out = cli("--db", db, "import", str(FOLDER))
    assert code == 0 and CHATML.name not in out
    traces = json.loads(cli("--db", db, "traces", "--json")[1])
    exports = sorted(FOLDER.glob("*.trace.json"))
    assert len(traces) == len(exports) == 3
    assert {t["source"] for t in traces} == {"otel"}
    for path in exports:
        raw = json.loads(path.read_text(encoding="utf-8"))
        generations = [o for o in raw["observations"] if o["type"] == "GENERATION"]
        (t,) = [t for t in traces if t["title"] == raw["trace"]["name"]]
        assert t["calls"] == len(generations), path.name
