"""Messages whose time the source did not record (h13f): the store filled ``created_at`` with
the import time and ``show --json`` / ``export`` gave it as if it had been recorded (the
assistant message of a 2025-02-11 Inspect sample "created" at the import).

Now an importer dates every message the file dates (Inspect: the model event that returned
an assistant message, the tool event of a result, the sample's start for its input; Codex:
the ``session_meta`` record for the system prompt), and a message without a time gets the
trace's one fill time, said as such: ``created_recorded: false`` per message in ``show
--json`` and the export, ``metadata.undated`` on the trace, kept by a re-import of the
export. Expected times come from the raw files, read with plain ``zipfile``/``json``."""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TRACES

Cli = Callable[..., tuple[int, str]]

EVAL = next(iter(sorted((TRACES / "inspect_ai").rglob("*popularity*.eval"))), None)
TOOL_ERRORS = TRACES / "inspect_ai/UKGovernmentBEIS__inspect_ai/tests/log/test_eval_log"
TOOL_ERRORS_LOG = TOOL_ERRORS / "log_tool_call_error.json"
IMAGES_LOG = TOOL_ERRORS / "log_images_tc.json"
SWE = next(iter(sorted((TRACES / "swe_agent").rglob("pydicom__pydicom-1458.traj"))), None)
CODEX = next(iter(sorted((TRACES / "codex").rglob("rollout-2026-05-11*.jsonl"))), None)
LITELLM = next(iter(sorted((TRACES / "chat_messages").rglob("litellm_proxy__*.json"))), None)
pytestmark = pytest.mark.skipif(
    None in (EVAL, SWE, CODEX, LITELLM) or not TOOL_ERRORS_LOG.is_file(),
    reason="shared/traces not present",
)


def _iso(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _import(cli: Cli, db: Path, path: Path) -> list[dict[str, Any]]:
    code, out = cli("--db", str(db), "import", str(path), "--json")
    assert code == 0, out
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


def _show(cli: Cli, db: Path, trace_id: str) -> list[dict[str, Any]]:
    code, out = cli("--db", str(db), "show", trace_id, "--json")
    assert code == 0
    messages: list[dict[str, Any]] = json.loads(out)["messages"]
    return messages


def _export(cli: Cli, db: Path, trace_id: str, out: Path) -> dict[str, Any]:
    code, _ = cli("--db", str(db), "export", trace_id, "--format", "json", "-o", str(out))
    assert code == 0
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def _times(messages: list[dict[str, Any]]) -> list[tuple[float, bool]]:
    return [(m["created_at"], m["created_recorded"]) for m in messages]


def _eval_samples(path: Path) -> dict[Any, dict[str, Any]]:
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist() if n.startswith("samples/")]
        samples = [json.loads(z.read(n)) for n in names]
    return {s["id"]: s for s in samples}


def _inspect_expected(sample: dict[str, Any], events: list[dict[str, Any]]) -> list[Any]:
    """``(created_at, recorded)`` per message, from the raw sample: input at the sample's
    start (``started_at``, else its ``sample_init`` event), an assistant message at its model
    event (``completed``, else ``timestamp``), a tool result at its tool event; anything else
    is not recorded and holds the trace's start (``started_at``/``completed_at``, else its
    first event's time)."""
    ends = [_iso(sample[k]) for k in ("started_at", "completed_at") if sample.get(k)]
    first = min(ends) if ends else _iso(events[0]["timestamp"])
    init = [_iso(e["timestamp"]) for e in events if e["event"] == "sample_init"]
    start = _iso(sample["started_at"]) if sample.get("started_at") else (init or [None])[0]
    models = [_iso(e.get("completed") or e["timestamp"]) for e in events if e["event"] == "model"]
    tools = {e["id"]: _iso(e.get("completed") or e["timestamp"]) for e in events
             if e["event"] == "tool"}  # fmt: skip
    out: list[Any] = []
    for m in sample["messages"]:
        if m.get("source") == "input":
            out.append((start, True))
        elif m["role"] == "assistant":
            out.append((models.pop(0), True))
        elif m["role"] == "tool" and m.get("tool_call_id") in tools:
            out.append((tools[m["tool_call_id"]], True))
        else:
            out.append((first, False))
    return out


def test_inspect_messages_carry_the_times_the_eval_recorded(cli: Cli, tmp_path: Path) -> None:
    """The popularity eval: each sample's input at its start, the reply at its model event,
    the system message (which no event dates) "not recorded", holding the sample's start."""
    assert EVAL is not None
    db = tmp_path / "s.db"
    before = time.time()
    _import(cli, db, EVAL)
    rows = json.loads(cli("--db", str(db), "traces", "--json")[1])
    traces = {r["sample"]["id"]: r["id"] for r in rows if r["source"] == "inspect"}
    samples = _eval_samples(EVAL)
    assert set(traces) == set(samples) and len(samples) == 10
    for sid, sample in samples.items():
        expected = _inspect_expected(sample, sample["events"])
        shown = _show(cli, db, traces[sid])
        assert _times(shown) == expected, sid
        assert [m["role"] for m in shown] == ["system", "user", "assistant"]
        assert all(m["created_at"] < before for m in shown), "no import time is left"
        data = _export(cli, db, traces[sid], tmp_path / f"{sid}.json")
        assert data["trace"]["metadata"]["undated"] == {
            "messages": 1,
            "filled_with": "trace start",
            "at": expected[0][0],
            "sequences": [[0, 0]],
        }
        assert _times(data["messages"]) == expected, "the export says the same"


def test_the_export_round_trip_keeps_the_marking(cli: Cli, tmp_path: Path) -> None:
    """A re-import of ctxlens's own export reads the marking from the trace's metadata:
    ``show --json`` says the same, and exporting again gives the same file."""
    assert SWE is not None
    (row,) = _import(cli, tmp_path / "a.db", SWE)
    first = _export(cli, tmp_path / "a.db", row["trace_id"], tmp_path / "one.json")
    assert not any(m["created_recorded"] for m in first["messages"])
    (again,) = _import(cli, tmp_path / "b.db", tmp_path / "one.json")
    assert again["format"] == "ctxlens" and again["trace_id"] == row["trace_id"]
    assert _times(_show(cli, tmp_path / "b.db", row["trace_id"])) == _times(first["messages"])
    _export(cli, tmp_path / "b.db", row["trace_id"], tmp_path / "two.json")
    assert (tmp_path / "two.json").read_bytes() == (tmp_path / "one.json").read_bytes()
    assert EVAL is not None
    _import(cli, tmp_path / "c.db", EVAL)
    tid = json.loads(cli("--db", str(tmp_path / "c.db"), "traces", "--json")[1])[0]["id"]
    exported = _export(cli, tmp_path / "c.db", tid, tmp_path / "eval.json")
    (back,) = _import(cli, tmp_path / "d.db", tmp_path / "eval.json")
    shown = _show(cli, tmp_path / "d.db", back["trace_id"])
    assert [m["created_recorded"] for m in shown] == [False, True, True]
    assert _times(shown) == _times(exported["messages"])


def test_a_trajectory_that_dates_nothing_says_so(cli: Cli, tmp_path: Path) -> None:
    """SWE-agent's pydicom trajectory records no time: every message holds one fill, the
    import time, and says it is not recorded."""
    assert SWE is not None
    raw = json.loads(SWE.read_text(encoding="utf-8"))
    db = tmp_path / "s.db"
    before = time.time()
    (row,) = _import(cli, db, SWE)
    after = time.time()
    shown = _show(cli, db, row["trace_id"])
    assert len(shown) == len(raw["history"]) == 26
    (at,) = {m["created_at"] for m in shown}
    assert before <= at <= after
    assert not any(m["created_recorded"] for m in shown)
    meta = _export(cli, db, row["trace_id"], tmp_path / "x.json")["trace"]["metadata"]
    assert meta["undated"] == {
        "messages": 26,
        "filled_with": "import time",
        "at": at,
        "sequences": [[0, 25]],
    }


def test_inspect_results_without_events_hold_the_evals_date(cli: Cli, tmp_path: Path) -> None:
    """``log_tool_call_error.json``: 11 tool results and no events, so nothing dates them;
    they hold the eval's ``created`` (the trace's start) and say they are not recorded."""
    raw = json.loads(TOOL_ERRORS_LOG.read_text(encoding="utf-8"))
    (sample,) = raw["samples"]
    assert not sample.get("events") and not (sample.get("transcript") or {}).get("events")
    db = tmp_path / "s.db"
    (row,) = _import(cli, db, TOOL_ERRORS_LOG)
    shown = _show(cli, db, row["trace_id"])
    created = _iso(raw["eval"]["created"])
    assert _times(shown) == [(created, False)] * len(sample["messages"]) == [(created, False)] * 11


def test_inspect_2024_log_dates_its_reply_by_the_model_event(cli: Cli, tmp_path: Path) -> None:
    """``log_images_tc.json`` (Inspect 2024, events in ``transcript``): the reply at its model
    event, the input at ``sample_init``, the system message not recorded."""
    raw = json.loads(IMAGES_LOG.read_text(encoding="utf-8"))
    (sample,) = raw["samples"]
    db = tmp_path / "s.db"
    (row,) = _import(cli, db, IMAGES_LOG)
    expected = _inspect_expected(sample, sample["transcript"]["events"])
    assert [r for _, r in expected] == [False, True, True]
    assert _times(_show(cli, db, row["trace_id"])) == expected


def test_completed_and_tool_events_date_their_messages(cli: Cli, tmp_path: Path) -> None:
    """Current Inspect releases record ``started_at``, a model event's ``completed`` and tool
    events: the popularity sample and the tool-error sample given them (the real logs
    predate them) take the sample's start for the input, ``completed`` for the reply and
    each tool event's ``completed`` for its result."""
    assert EVAL is not None
    from tests.core.importers.zstd_eval import write_eval

    sample = _eval_samples(EVAL)[1]
    sample["started_at"] = "2025-02-11T15:18:03.5-05:00"
    sample["completed_at"] = "2025-02-11T15:18:06-05:00"
    for e in sample["events"]:
        if e["event"] == "model":
            e["completed"] = "2025-02-11T15:18:05.25-05:00"
    with zipfile.ZipFile(EVAL) as z:
        header = z.read("header.json")
    path = write_eval(
        tmp_path / "new.eval",
        [("header.json", header), ("samples/1_epoch_1.json", json.dumps(sample).encode())],
    )
    db = tmp_path / "s.db"
    (row,) = _import(cli, db, path)
    expected = _inspect_expected(sample, sample["events"])
    assert expected[1:] == [
        (_iso("2025-02-11T15:18:03.5-05:00"), True),
        (_iso("2025-02-11T15:18:05.25-05:00"), True),
    ]
    assert _times(_show(cli, db, row["trace_id"])) == expected

    raw = json.loads(TOOL_ERRORS_LOG.read_text(encoding="utf-8"))
    (tools,) = raw["samples"]
    tools["events"] = [
        {"event": "tool", "id": m["tool_call_id"], "function": "bash",
         "timestamp": f"2025-02-07T00:00:{n:02d}+00:00",
         "completed": f"2025-02-07T00:00:{n:02d}.5+00:00"}
        for n, m in enumerate(tools["messages"])
    ]  # fmt: skip
    (tmp_path / "tools.json").write_text(json.dumps(raw), encoding="utf-8")
    (row,) = _import(cli, db, tmp_path / "tools.json")
    expected = _inspect_expected(tools, tools["events"])
    assert expected == [(_iso(f"2025-02-07T00:00:{n:02d}.5+00:00"), True) for n in range(11)]
    assert _times(_show(cli, db, row["trace_id"])) == expected


def test_codex_system_prompt_is_dated_by_its_record(cli: Cli, tmp_path: Path) -> None:
    """The codemie rollout's system prompt (``session_meta.base_instructions``) took the
    import time; it is dated by the record that holds it, and every message is recorded."""
    assert CODEX is not None
    first = json.loads(CODEX.read_text(encoding="utf-8").splitlines()[0])
    assert first["type"] == "session_meta" and first["payload"]["base_instructions"]["text"]
    db = tmp_path / "s.db"
    (row,) = _import(cli, db, CODEX)
    shown = _show(cli, db, row["trace_id"])
    assert shown[0]["kind"] == "system_prompt"
    assert shown[0]["content"] == first["payload"]["base_instructions"]["text"]
    assert shown[0]["created_at"] == _iso(first["timestamp"])
    assert all(m["created_recorded"] for m in shown)
    meta = _export(cli, db, row["trace_id"], tmp_path / "x.json")["trace"]["metadata"]
    assert "undated" not in meta


def test_a_litellm_log_dates_only_its_response(cli: Cli, tmp_path: Path) -> None:
    """The LiteLLM completion log records one time, ``timestamp``, the response's; its
    request messages are not recorded (filled with the import time: the log's timestamp
    comes after them in the file, which is streamed)."""
    assert LITELLM is not None
    raw = json.loads(LITELLM.read_text(encoding="utf-8"))
    db = tmp_path / "s.db"
    before = time.time()
    (row,) = _import(cli, db, LITELLM)
    shown = _show(cli, db, row["trace_id"])
    assert len(shown) == len(raw["messages"]) + 1
    assert shown[-1]["role"] == "assistant"
    assert (shown[-1]["created_at"], shown[-1]["created_recorded"]) == (raw["timestamp"], True)
    (at,) = {m["created_at"] for m in shown[:-1]}
    assert at >= before and not any(m["created_recorded"] for m in shown[:-1])


def test_search_hits_say_which_times_were_recorded(cli: Cli, tmp_path: Path) -> None:
    """``ctxlens search`` gave a hit in an undated message the import time as its time."""
    assert SWE is not None
    raw = json.loads(SWE.read_text(encoding="utf-8"))
    db = tmp_path / "s.db"
    _import(cli, db, SWE)
    code, out = cli("--db", str(db), "search", "role:assistant", "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert len(hits) == sum(1 for m in raw["history"] if m["role"] == "assistant")
    assert {h["created_recorded"] for h in hits} == {False}
    code, text = cli("--db", str(db), "search", "role:assistant")
    assert code == 0
    lines = text.splitlines()[:-1]
    assert len(lines) == len(hits) and all(line.split()[1] == "undated" for line in lines)
