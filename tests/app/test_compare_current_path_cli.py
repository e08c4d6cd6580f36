"""What the comparison's rows count (review of the comparison, hcmp).

- Its input-token row was labelled "all calls" but summed the main agent's calls, and the
  re-run's report gave another figure (ctxlens's count of the contexts, where the
  comparison reads the model's recorded usage): on the demo replayed with a window of
  8,000, 488,598 in the comparison against 490,738 in "Re-run with…". Now ``replay``'s
  ``input_tokens`` is the comparison's main-agent sum and ``input_tokens_all_calls`` its
  all-calls sum, figure for figure.
- Tool calls and compactions came from ``core/run/metrics.py:compute`` over the whole
  export, so a trace rewound and run on counted its abandoned branch too (the demo
  resumed from an older checkpoint: 123 main-agent calls beside 200 tool calls and 13
  compactions, where its current path holds 125 and 7). Every figure is now of the
  current path; the calls left out are said.

The rewind is made through the CLI (``resume --checkpoint N --rewind``: back to an older
checkpoint, the later messages become an abandoned branch, the run goes on). The expected
figures are those of a trace that did the same work with no rewind: its replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.run.metrics import compute
from tests.helpers.shared_demo import demo_copy

Cli = Callable[..., tuple[int, str]]


def _json(cli: Cli, *argv: str) -> dict[str, Any]:
    code, out = cli(*argv, "--json")
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    return data


def _export(cli: Cli, db: Path, trace: str) -> dict[str, Any]:
    code, out = cli("--db", str(db), "export", trace)
    assert code == 0
    data: dict[str, Any] = json.loads(out)
    return data


def test_the_replays_input_tokens_are_the_comparisons(
    cli: Cli, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, source = demo_copy(tmp_path_factory, tmp_path / "store")
    out = _json(cli, "--db", str(db), "replay", source, "--set", "window=8000", "--compare")
    s = out["comparison"]
    assert out["input_tokens"] == s["input_tokens"]["b"], "one figure for the main agent"
    assert out["input_tokens_all_calls"] == s["input_tokens_all_calls"]["b"]
    assert out["main_calls"] == s["main_calls"]["b"] and out["all_calls"] == s["all_calls"]["b"]
    assert (
        out["input_basis"] == s["input_basis"]["b"] == {"recorded": out["main_calls"], "counted": 0}
    )
    assert out["input_tokens_all_calls"] > out["input_tokens"], "the subagent's calls too"
    assert out["all_calls"] > out["main_calls"]
    assert out["input_tokens_counted"] > 0, "ctxlens's own count stays available"
    code, text = cli("--db", str(db), "replay", source, "--set", "window=8000")
    assert code == 0
    assert f"{out['input_tokens_all_calls']:,} input tokens over all calls (recorded)" in text
    assert f"{out['input_tokens']:,} in the {out['main_calls']} main-agent calls" in text
    cmp = _json(cli, "--db", str(db), "compare", source, out["trace_id"])
    assert cmp["b"]["input_tokens_all_calls"] == out["input_tokens_all_calls"]
    assert sum(cmp["b"]["input_tokens"]) == out["input_tokens"]


def test_a_rewound_trace_is_compared_on_its_current_path(
    cli: Cli, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    db, a = demo_copy(tmp_path_factory, tmp_path / "store")
    total = len(_export(cli, db, a)["llm_calls"])
    resumed = _json(cli, "--db", str(db), "resume", a, "--checkpoint", "12", "--rewind")
    assert resumed["rewound_to"] is not None and resumed["stopped"] == "done"
    b = _json(cli, "--db", str(db), "replay", a)["trace_id"]
    export_a, export_b = _export(cli, db, a), _export(cli, db, b)
    everything = compute(export_a)  # the whole trace, abandoned branch included
    again = compute(export_b)  # the same work done once, no rewind
    assert len(export_a["llm_calls"]) > total, "the run went on after the rewind"

    data = _json(cli, "--db", str(db), "compare", a, b)
    s = data["summary"]
    assert s["main_calls"]["a"] == s["main_calls"]["b"] == again["main_llm_calls"]
    assert s["tool_calls"] == {"a": again["tool_calls"], "b": again["tool_calls"]}
    assert everything["tool_calls"] > again["tool_calls"], "the abandoned branch had tool calls"
    assert s["compactions_by_level"]["a"] == again["compactions"]
    assert s["compactions"]["a"] == sum(again["compactions"].values())
    assert sum(everything["compactions"].values()) > s["compactions"]["a"]
    assert len(data["a"]["compactions"]) == s["compactions"]["a"]
    assert s["all_calls"]["a"] == again["llm_calls"]
    assert s["abandoned_calls"] == {"a": len(export_a["llm_calls"]) - again["llm_calls"], "b": 0}
    assert data["a"]["metrics"]["llm_calls"] == again["llm_calls"]
    assert data["a"]["metrics"]["main_llm_calls"] == again["main_llm_calls"]

    code, text = cli("--db", str(db), "compare", a, b)
    assert code == 0
    left_out = s["abandoned_calls"]["a"]
    assert f"Branches abandoned by a rewind are not counted (A {left_out:,} calls)" in text
