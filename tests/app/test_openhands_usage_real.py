"""Review findings 5 and 6: an OpenHands V1 conversation's ``stats`` updates (accumulated
usage of its LLM) become the calls' recorded usage and model; the trace list, the playback
and ``context --call`` agree on the calls.

The expectation reads the raw file with plain ``json``: one call per update whose growth
equals its ``per_turn_token``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from core.inspector.playback import PlaybackFrames
from core.store import Store
from tests.conftest import TRACES
from tests.helpers.playback import main_positions

EVENTS = (
    TRACES / "openhands/OpenHands__software-agent-sdk/tests/sdk/conversation/goal/fixtures"
    / "events.jsonl"
)  # fmt: skip
pytestmark = pytest.mark.skipif(not EVENTS.is_file(), reason="shared/traces not present")


def _calls(path: Path) -> list[tuple[int, int, int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return stats_calls([json.loads(line) for line in lines if line.strip()])


def stats_calls(events: Iterable[dict[str, Any]]) -> list[tuple[int, int, int, str]]:
    """(prompt, completion, cache read, model) per call the stats updates record."""
    out, before = [], {"prompt_tokens": 0, "completion_tokens": 0, "cache_read_tokens": 0}
    for ev in events:
        if ev.get("key") != "stats":
            continue
        metrics = ev["value"]["usage_to_metrics"]["default"]
        acc = metrics["accumulated_token_usage"]
        d = {k: acc[k] - before[k] for k in before}
        before = {k: acc[k] for k in before}
        if d["prompt_tokens"] + d["completion_tokens"] == acc["per_turn_token"] > 0:
            out.append((d["prompt_tokens"], d["completion_tokens"], d["cache_read_tokens"],
                        metrics["model_name"]))  # fmt: skip
    return out


def test_stats_updates_are_the_calls_usage(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    expected = _calls(EVENTS)
    assert expected
    db = tmp_path / "s.db"
    assert cli("--db", str(db), "import", str(EVENTS))[0] == 0
    (row,) = json.loads(cli("--db", str(db), "traces", "--json")[1])
    assert row["calls"] == len(expected) and row["model"] == expected[-1][3]
    for n, (prompt, completion, cached, _model) in enumerate(expected):
        code, out = cli("--db", str(db), "context", row["id"], "--call", str(n), "--json")
        rec = json.loads(out)["recorded"]
        assert code == 0 and (rec["prompt_tokens"], rec["output_tokens"]) == (prompt, completion)
        assert rec["cached_tokens"] == cached
    with Store.open(db) as s, s.read() as r:
        frames = PlaybackFrames.open(r, row["id"])
    assert len(main_positions(frames.playback)) == len(expected)
    assert "token usage" not in frames.notes


def test_every_llm_response_of_a_cli_folder_is_a_call(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    from core.inspector.call_numbers import call_choices

    folder = next(
        (TRACES / "openhands/OpenHands__OpenHands-CLI").rglob("event-00000-*.json")
    ).parent
    events = [
        json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("event-*.json"))
    ]
    responses = {e["llm_response_id"] for e in events if e.get("llm_response_id")}
    db = tmp_path / "f.db"
    assert cli("--db", str(db), "import", str(folder))[0] == 0
    (row,) = json.loads(cli("--db", str(db), "traces", "--json")[1])
    assert row["calls"] == len(responses) > 3
    with Store.open(db) as s, s.read() as r:
        frames = PlaybackFrames.open(r, row["id"])
        choices = call_choices(r, row["id"])
    assert len(main_positions(frames.playback)) == len(choices) == len(responses)
    assert all(" — model," not in c.label for c in choices), "no literal 'model' for none"
    last = len(responses) - 1
    code, out = cli("--db", str(db), "context", row["id"], "--call", str(last), "--json")
    assert code == 0 and json.loads(out)["messages"][-1]["role"] == "user"


def test_a_call_holds_only_what_was_logged_before_it(
    cli: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    """Screenshot review: the response of this conversation's third call is not in its
    events, and its context was closed at the next stats update, so it held a tool result
    logged after the call (05:39:55.479 against the call's 05:39:55.324): "3 entered (+428
    tok)" where the recorded prompt grew by 280, then "0 entered" to the next call. A call
    holds what was logged before its stats update. Each event is one message here, in
    file order (checked), so a message's sequence is its event's line."""
    from core.context.view import call_view

    events = [json.loads(line) for line in EVENTS.read_text(encoding="utf-8").splitlines()]
    made = [
        n for n, ev in enumerate(events)
        if ev.get("key") == "stats" and stats_calls(events[: n + 1]) != stats_calls(events[:n])
    ]  # fmt: skip
    assert len(made) == len(_calls(EVENTS)) == 4
    db = tmp_path / "s.db"
    assert cli("--db", str(db), "import", str(EVENTS))[0] == 0
    (row,) = json.loads(cli("--db", str(db), "traces", "--json")[1])
    with Store.open(db) as s, s.read() as r:
        assert len(list(r.all_messages(row["id"]))) == len(events)
        for n, line in enumerate(made):
            call = r.llm_call(row["id"], n)
            seen = [
                e.item.sequence for e in call_view(r, call).entries if e.item.sequence is not None
            ]
            assert all(seq < line for seq in seen), (n, line, seen)
        # the result logged between the third and fourth calls is in the fourth one's
        late = next(
            n for n in range(made[2], made[3]) if events[n].get("kind") == "ObservationEvent"
        )
        fourth = call_view(r, r.llm_call(row["id"], 3)).entries
        assert late in [e.item.sequence for e in fourth]
