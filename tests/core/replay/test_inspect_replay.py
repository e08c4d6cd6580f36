"""What the window shows for playback, re-runs and comparisons (``core/inspector``), without Qt.

Frames are checked against ``Playback.state`` and the store's own records; re-run options
against ``RunConfig.with_settings``; the comparison rows against ``compare``'s summary.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.errors import InvalidInputError
from core.importers.api import import_paths
from core.inspector.call_numbers import number_range
from core.inspector.comparison import delta, export_html, metric_rows, retention_rows, setting_rows
from core.inspector.playback import PlaybackFrames, unknown_line, unknown_note
from core.inspector.rerun import (
    RerunProgress,
    command_line,
    defaults,
    run_rerun,
    settings_pairs,
    start_calls,
)
from core.replay.calls import live_calls, main_calls, trace_calls
from core.replay.compare import compare
from core.replay.rerun import ReplayOptions, replay
from core.run.config import RunConfig
from core.store import Store
from tests.conftest import TRACES
from tests.helpers.playback import main_positions

OPENHANDS = TRACES / "openhands/All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json"
# A bare OpenAI message list logs no model calls (the OpenHands V0 trajectory records its
# responses; SWE-agent 0.x's replies are its calls since its model_stats counts them).
NO_CALLS = (
    TRACES / "chat_messages/OpenHands__software-agent-sdk/tests/fixtures/llm_data"
    / "fncall-llm-message.json"
)  # fmt: skip


def test_frames_shape_each_calls_state_for_the_panes(demo_store: tuple[Store, str]) -> None:
    store, trace_id = demo_store
    with store.read() as r:
        frames = PlaybackFrames.open(r, trace_id)
        pb = frames.playback
        assert frames.stops == main_positions(pb) and frames.notes == ""
        refs = {x.id: x for x in r.refs(trace_id)}
        for stop in range(0, len(frames.stops), 7):
            f = frames.frame(r, stop)
            state = pb.state(r, frames.stops[stop])
            assert f.position == frames.stops[stop] and frames.stop_of(f.position) == stop
            assert state.goals is not None and f.goals is not None
            assert [(n.id, n.status) for n in f.goals] == [
                (g.id, g.status) for g in state.goals.goals
            ]
            assert [n.id for n in f.goals if n.focus] == (
                [state.goals.focus] if state.goals.focus else []
            )
            assert f.skills is not None and state.skills is not None
            assert [(s.message_sequence, s.status) for s in f.skills] == [
                (s.message_sequence, s.status) for s in state.skills
            ]
            assert f.grants is not None and state.grants is not None
            for row, g in zip(f.grants, state.grants, strict=True):
                assert row.ref_id == g.ref_id and row.kind == refs[g.ref_id].kind
                assert row.status == (
                    "revoked"
                    if g.revoked_at is not None
                    else "active"
                    if g.in_context
                    else "active, out of context"
                )
            assert f.in_context == {i.sequence for i in state.context if i.sequence is not None}
            assert f.label.startswith(
                f"call {f.position} of {number_range(len(pb.calls))} · main · "
            )
            assert f"{state.tokens.input:,} tokens in" in f.label
            assert f"head #{state.head}" in f.detail
            assert f.note("goals") == ""


def test_a_gone_skill_names_the_injection_that_replaced_it(demo_store: tuple[Store, str]) -> None:
    store, trace_id = demo_store
    with store.read() as r:
        frames = PlaybackFrames.open(r, trace_id)
        last = frames.frame(r, len(frames.stops) - 1)
    assert last.skills is not None
    gone = [s for s in last.skills if s.status == "compacted away"]
    assert gone, "the demo's skill left the context at least once"
    for s in gone:
        later = [
            x for x in last.skills if x.skill == s.skill and x.message_sequence > s.message_sequence
        ]
        if later:
            assert s.note == f"{later[0].reason} as #{later[0].message_sequence}"
        else:
            assert s.note == ""


def test_an_imported_trace_names_what_it_does_not_record(tmp_path: Path) -> None:
    if not NO_CALLS.is_file():
        pytest.skip("the shared OpenAI message list is not there")
    with Store.open(tmp_path / "s.db") as store:
        (result,) = import_paths(store, [NO_CALLS])
        with store.read() as r:
            frames = PlaybackFrames.open(r, result.trace_id)
            f = frames.frame(r, 0)
    assert f.goals is None and f.skills is None and f.grants is None
    assert f.note("goals") == "Goals: not recorded in this trace."
    assert f.note("grants") == unknown_note("grants")
    assert frames.notes == unknown_line(f.state.unknown)
    assert frames.notes.startswith("Not recorded in this trace: model calls (")
    # h13d: the Context pane's words for the same context (it said "derived from the path")
    assert "context reconstructed from the transcript" in f.detail


def test_recorded_responses_of_an_import_are_its_calls(tmp_path: Path) -> None:
    """OpenHands V0 logs each model response with its usage: those are the calls; their
    context is still rebuilt from the path, and the frame says so."""
    if not OPENHANDS.is_file():
        pytest.skip("the shared OpenHands trace is not there")
    with Store.open(tmp_path / "s.db") as store:
        (result,) = import_paths(store, [OPENHANDS])
        with store.read() as r:
            frames = PlaybackFrames.open(r, result.trace_id)
            f = frames.frame(r, 0)
    assert result.llm_calls == 2 and "model calls" not in frames.notes
    assert not f.state.context_recorded
    assert "context reconstructed from the transcript" in f.detail  # h13d: one wording


def test_settings_pairs_keep_what_differs_and_refuse_unknown_keys(
    demo_store: tuple[Store, str],
) -> None:
    store, trace_id = demo_store
    base = defaults(store.trace(trace_id).metadata)
    assert base["window"] == store.trace(trace_id).metadata["run_config"]["window"]
    assert settings_pairs(base, dict(base)) == ()
    chosen = {**base, "window": 8000, "threshold": 0.45, "compaction": "naive"}
    pairs = settings_pairs(base, chosen, "max_steps=90 window=9000")
    assert pairs == ("threshold=0.45", "compaction=naive", "max_steps=90", "window=9000")
    config = RunConfig.from_json(store.trace(trace_id).metadata["run_config"])
    changed = config.with_settings(list(pairs))
    assert (changed.window, changed.threshold, changed.compaction, changed.max_steps) == (
        9000,
        0.45,
        "naive",
        90,
    )
    with pytest.raises(InvalidInputError, match="no_such"):
        settings_pairs(base, base, "no_such=1")
    with pytest.raises(InvalidInputError):
        settings_pairs(base, base, "'unclosed")
    assert defaults(None)["window"] == RunConfig().window, "an imported trace: the defaults"
    opts = ReplayOptions(from_call=12, settings=("window=8000",), on_diverge="stop")
    assert command_line("abc", opts) == (
        "ctxlens replay abc --from-call 12 --set window=8000 --on-diverge stop"
    )


def test_start_calls_are_the_main_agents_calls_of_the_current_run(
    demo_store: tuple[Store, str],
) -> None:
    store, trace_id = demo_store
    with store.read() as r:
        choices = start_calls(r, trace_id)
        mains = [c.position for c in main_calls(live_calls(r, trace_id, trace_calls(r, trace_id)))]
    assert [c.position for c in choices] == sorted({0, *mains})
    assert choices[0].label.startswith("call 0 — from the start")
    # the demo's calls record their usage: the figure is the record, and says so
    assert all(" tokens in (recorded)" in c.label for c in choices[1:])


def test_a_stopped_rerun_reports_its_partial_trace(demo_store: tuple[Store, str]) -> None:
    store, trace_id = demo_store
    cancel = threading.Event()
    seen: list[RerunProgress] = []

    def report(p: RerunProgress) -> None:
        seen.append(p)
        if p.calls >= 4:
            cancel.set()

    outcome = run_rerun(store, trace_id, ReplayOptions(), cancel, report)
    assert outcome.cancelled and outcome.result is None and outcome.trace_id is not None
    with store.read() as r:
        written = r.llm_call_count(outcome.trace_id)
        assert r.trace(outcome.trace_id).metadata["replay_of"]["trace"] == trace_id
        total = r.llm_call_count(trace_id)
    assert 4 <= outcome.progress.calls <= written < total
    assert seen[-1].expected == total
    assert "Cancelled after" in outcome.headline()


def test_comparison_rows_carry_both_sides_and_the_delta(
    demo_store: tuple[Store, str], tmp_path: Path
) -> None:
    store, trace_id = demo_store
    with store.read() as r:
        mains = [c.position for c in main_calls(trace_calls(r, trace_id))]
    result = replay(store, trace_id, ReplayOptions(from_call=mains[-15], settings=("window=8000",)))
    cmp = compare(store, trace_id, result.trace_id)
    rows = {m.key: m for m in metric_rows(cmp)}
    s = cmp.summary
    # h13d: each sum says where its calls' inputs come from (the demo's model server
    # records the usage of every call)
    assert cmp.a.input_basis == ("recorded",) * len(cmp.a.input_tokens)
    assert rows["input_tokens"].a == f"{s['input_tokens']['a']:,} (recorded)"
    assert rows["input_tokens"].delta.startswith(f"{s['input_tokens']['delta']:+,}")
    assert rows["compactions"].changed == (s["compactions"]["a"] != s["compactions"]["b"])
    assert rows["main_calls"].delta == "0" and not rows["main_calls"].changed
    first = cmp.first_difference
    assert rows["same_context_calls"].delta == f"first differs at call {first}"
    settings = setting_rows(cmp)
    assert settings[0].key == "window" and settings[0].changed
    assert not any(r.changed for r in settings[1:])
    assert {r.field for r in retention_rows(cmp)} >= {"refs", "completed steps", "skills"}
    out = export_html(cmp, tmp_path / "r.html")
    assert f"{s['input_tokens']['a']:,}" in out.read_text(encoding="utf-8")


def test_delta_formats() -> None:
    assert delta(100, 150) == "+50 (+50 %)"
    assert delta(1000, 995) == "-5 (-0.5 %)"
    assert delta(7, 7) == "0"
    assert delta(0.5, 0.25) == "-0.25 (-50 %)"
    assert delta({"goal": 1}, {"goal": 2}) == "" and delta(None, 3) == ""
