"""Issue 13: Codex and OpenHands compaction summaries sit on the main path right after the
last message before their boundary (where the tool put them into the model's context), as
Claude Code's do; the context after the boundary is what the tool sent next.

No real trace in shared/traces records a Codex or OpenHands compaction (checked: no
``compacted``/``context_compacted`` line, no ``Condensation`` event or ``condensation``
action in any of them), so the project's fixtures of those shapes are used, through the CLI:
``import``, ``show --json``, ``export``, ``context --call N --json``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

FIX = Path(__file__).resolve().parents[1] / "fixtures"
Cli = Callable[..., tuple[int, str]]
CASES = {
    "codex": FIX / "codex/rollout-compacted.jsonl",
    "openhands-v1": FIX / "openhands/condensation.jsonl",
    "openhands-v0": FIX / "openhands/v0-condensation.json",
}


def _json(cli: Cli, *argv: str) -> Any:
    code, out = cli(*argv)
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize("path", CASES.values(), ids=CASES.keys())
def test_the_summary_follows_its_boundary_on_the_main_path(
    cli: Cli, tmp_path: Path, path: Path
) -> None:
    db = str(tmp_path / "s.db")
    (row,) = _json(cli, "--db", db, "import", str(path), "--json")
    dump_path = tmp_path / "t.json"
    assert cli("--db", db, "export", row["trace_id"], "-o", str(dump_path))[0] == 0
    dump = json.loads(dump_path.read_text())
    events = [e for e in dump["compactions"] if e["summary_sequence"] is not None]
    assert events
    shown = _json(cli, "--db", db, "show", row["trace_id"], "--json")["messages"]
    path_seqs = [m["sequence"] for m in shown]
    by_seq = {m["sequence"]: m for m in dump["messages"]}
    for ev in events:
        summary = by_seq[ev["summary_sequence"]]
        assert (summary["kind"], summary["branch_type"]) == ("summary", None)
        assert summary["sequence"] in path_seqs, "on the main path"
        assert ev["at_sequence"] == summary["sequence"], "the boundary is anchored at it"
        before = path_seqs[path_seqs.index(summary["sequence"]) - 1]
        assert summary["parent_sequence"] == before
        assert summary["sequence"] not in ev["removed"]
    assert not any(m["branch_type"] for m in shown)
    # What the tool sent next: each first call after a boundary starts with the boundary's
    # context, then only what followed the summary on the path.
    for ev in events:
        after = _expand(ev["context_after"])
        later = [c for c in dump["llm_calls"] if c["head_sequence"] > ev["at_sequence"]]
        if not later:
            continue
        sent = _expand(min(later, key=lambda c: c["call_index"])["context"])
        assert sent[: len(after)] == after, (ev, sent)
        follow = path_seqs[path_seqs.index(ev["at_sequence"]) + 1 :]
        assert sent[len(after) :] == [s for s in follow if s in sent[len(after) :]]
    if not any(c["head_sequence"] > events[-1]["at_sequence"] for c in dump["llm_calls"]):
        # the next call (the current context) starts with the last boundary's context
        current = _json(cli, "--db", db, "context", row["trace_id"], "--json")["messages"]
        items = events[-1]["context_after"]
        synthetic = iter(i["content"] for i in items if isinstance(i, dict) and "content" in i)
        want = [by_seq[q]["content"] if q is not None else next(synthetic)
                for q in _expand(items)]  # fmt: skip
        assert [m["content"] for m in current[: len(want)]] == want


def _seq(item: Any) -> int | None:
    return item if isinstance(item, int) else item.get("sequence")  # else synthetic


def _expand(context: list[Any]) -> list[int | None]:
    """An exported call context as sequences (``{"range": [a, b]}`` is a run a..b)."""
    out: list[int | None] = []
    for item in context:
        if isinstance(item, dict) and "range" in item:
            out.extend(range(item["range"][0], item["range"][1] + 1))
        else:
            out.append(_seq(item))
    return out


def test_no_real_trace_records_a_codex_or_openhands_compaction() -> None:
    """Pins why the fixtures above stand in: if a real one is added, test it here."""
    if not TRACES.is_dir():
        pytest.skip("shared traces not present")
    markers = ('"compacted"', '"context_compacted"', '"Condensation"', '"condensation"')
    for folder in ("codex", "openhands"):
        for f in (TRACES / folder).rglob("*"):
            if f.is_file():
                text = f.read_text(encoding="utf-8", errors="replace")
                assert not any(m in text for m in markers), f
