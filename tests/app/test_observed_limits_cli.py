"""Review 13a, findings 4 and 5 on the command line: Claude Code's auto-compact point is the
size at which its compaction fired (``compactMetadata.preTokens``), so its real threshold is
at or below it and what is left before it is an upper bound; the next call's prompt is an
estimate. ``ctxlens context --json`` and ``compact --json`` say so in added keys (none is
renamed or dropped). Expected numbers come from the raw session file with plain ``json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.test_imported_free_space import SESSION, Cli, imported
from tests.conftest import TRACES
from tests.core.importers.test_imported_calls import cc_prompts
from tests.helpers.raw_usage import calls_before_auto_compaction, pre_tokens

pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason="shared/traces not present")


def test_context_json_marks_the_auto_compact_point_as_observed(cli: Cli, tmp_path: Path) -> None:
    db, trace_id = imported(cli, tmp_path)
    fired = pre_tokens(SESSION)
    prompt = cc_prompts([str(SESSION)])[101]
    code, out = cli("--db", db, "context", trace_id, "--call", "101", "--json")
    data = json.loads(out)
    assert code == 0 and data["limits"]["auto-compact point"] == fired, "the key stays"
    assert data["prompt_tokens"] == prompt
    assert data["prompt_basis"] == "recorded" and data["prompt_estimated"] is False
    detail = {d["name"]: d for d in data["limits_detail"]}
    assert calls_before_auto_compaction(SESSION) > 101  # call 101 came before it fired
    assert detail["auto-compact point"] == {
        "name": "auto-compact point",
        "label": "auto-compact fired later, at",
        "tokens": fired,
        "observed": True,
        "left": fired - prompt,
        "left_bound": "at_most",
        "estimated": False,
    }
    window = detail["window"]
    assert window["observed"] is False and window["left_bound"] == "exact"
    assert window["left"] == data["free_tokens"] == data["window"]["tokens"] - prompt

    # the first main call after it fired (the compaction summarizer's calls, in the
    # session's agent-acompact-* file, come between): "fired at"
    after = calls_before_auto_compaction(SESSION)
    summarizer = sorted((SESSION.parent / SESSION.stem / "subagents").glob("agent-acompact-*"))
    first = after + len(cc_prompts([str(f) for f in summarizer]))
    code, out = cli("--db", db, "context", trace_id, "--call", str(first), "--json")
    later = json.loads(out)
    auto = {d["name"]: d for d in later["limits_detail"]}["auto-compact point"]
    assert code == 0 and later["prompt_tokens"] == cc_prompts([str(SESSION)])[after]
    assert (
        auto["label"] == "auto-compact fired at" and auto["left"] == fired - later["prompt_tokens"]
    )

    code, out = cli("--db", db, "context", trace_id, "--json")
    nxt = json.loads(out)
    assert code == 0 and nxt["carried_from"] is not None
    assert nxt["prompt_basis"] == "estimated" and nxt["prompt_estimated"] is True
    auto = {d["name"]: d for d in nxt["limits_detail"]}["auto-compact point"]
    assert auto["estimated"] is True and auto["left"] == fired - nxt["prompt_tokens"]
    assert auto["label"] == "auto-compact fired at"


def test_compact_says_its_threshold_is_where_compaction_fired(cli: Cli, tmp_path: Path) -> None:
    db, trace_id = imported(cli, tmp_path)
    fired = pre_tokens(SESSION)
    code, out = cli("--db", db, "compact", trace_id, "--level", "auto", "--json")
    threshold = json.loads(out)["limits"]["threshold"]
    assert code == 0 and threshold["tokens"] == fired
    assert threshold["source"] == "auto-compact point", "the key and its value stay"
    assert threshold["observed"] is True
    assert threshold["label"] == (
        "auto-compact fired at this size; the tool's threshold is at or below it"
    )
    code, text = cli("--db", db, "compact", trace_id, "--level", "auto")
    assert code == 0
    assert f"threshold {fired:,} (auto-compact fired at this size; the tool's threshold" in text
    # a threshold the user gives is not observed
    code, out = cli("--db", db, "compact", trace_id, "--level", "auto", "--threshold", "0.4",
                    "--json")  # fmt: skip
    threshold = json.loads(out)["limits"]["threshold"]
    assert threshold["observed"] is False and threshold["label"] == "option"
