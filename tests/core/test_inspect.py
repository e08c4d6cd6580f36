"""core.inspector on real store files: the numbers the inspector shows, checked independently."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.context.budget import DEFAULT_LIMITS_TEXT, Budget, budget_from_metadata, budget_of
from core.context.view import current_items, current_view, token_breakdown
from core.inspector.bands import bands
from core.inspector.branches import branches, fork_badges
from core.inspector.context_report import call_report, current_report, diff_items
from core.inspector.detail import guess_format, message_detail
from core.inspector.fuzzy import (
    PREFIX,
    SCATTERED,
    SUBSTRING,
    WORD_START,
    alignment,
    fuzzy_filter,
    fuzzy_score,
    match_tier,
    word_starts,
)
from core.inspector.goals import goal_key, goal_outline
from core.inspector.membership import context_membership, iter_current
from core.inspector.panels import grant_rows, skill_rows
from core.inspector.query import parse_query, run_search
from core.inspector.timeline import badges_of, row_of
from core.records import CompactionEvent, ContextItem, NewMessage, ToolCall, Trace
from core.store import Store
from tests.sample_trace import write_sample


@pytest.fixture
def sample(store: Store) -> Trace:
    return write_sample(store)


def _live_by_current_items(store: Store, trace_id: str) -> set[int]:
    with store.read() as r:
        items, _ = current_items(r, trace_id)
    return {i.sequence for i in items if i.sequence is not None}


def _live_by_membership(store: Store, trace_id: str) -> set[int]:
    with store.read() as r:
        member = context_membership(r, trace_id)
        return {
            m.sequence
            for row, m in enumerate(r.iter_main_path(trace_id))
            if member.contains(row, m.sequence, m.kind not in ("meta", "thinking"))
        }


def test_membership_matches_current_items_on_the_sample(store: Store, sample: Trace) -> None:
    assert _live_by_membership(store, sample.id) == _live_by_current_items(store, sample.id)


def test_iter_current_yields_exactly_current_items(store: Store, sample: Trace) -> None:
    with store.read() as r:
        items, _ = current_items(r, sample.id)
        streamed = [i for i, _m in iter_current(r, sample.id)]
    assert streamed == list(items)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["msg", "meta", "compact", "rewind"]), st.integers(0, 50)),
        min_size=1,
        max_size=30,
    )
)
def test_membership_matches_current_items_on_generated_traces(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int]]
) -> None:
    path = tmp_path_factory.mktemp("gen") / "s.db"
    with Store.open(path) as s:
        tr = s.create_trace("g")
        s.append(tr.id, [NewMessage("user", "start")])
        for op, n in ops:
            _apply(s, tr.id, op, n)
        assert _live_by_membership(s, tr.id) == _live_by_current_items(s, tr.id)


def _apply(s: Store, trace_id: str, op: str, n: int) -> None:
    with s.write() as w:
        path = w.read.main_path_sequences(trace_id)
        if op == "msg":
            w.append(trace_id, [NewMessage("assistant", f"m{n}")])
        elif op == "meta":
            w.append(trace_id, [NewMessage("assistant", "meta", kind="meta")])
        elif op == "rewind":
            w.rewind(trace_id, path[n % len(path)])
        else:
            keep = tuple(ContextItem(q, "x" if q % 3 == 0 else None) for q in path[:: n % 3 + 1])
            w.record_compaction(
                CompactionEvent(trace_id, "snip", path[-1], (), keep, 10, 5, len(path), len(keep))
            )


def test_report_parts_sum_to_the_view_total(store: Store, sample: Trace) -> None:
    report = current_report_of(store, sample.id)
    with store.read() as r:
        total, by = token_breakdown(current_view(r, sample.id))
    assert sum(report.by_component.values()) == report.total == total
    assert report.by_component == by
    assert report.items == len(report.rows) and report.elided == 0


def current_report_of(store: Store, trace_id: str, keep: int = 4000):  # type: ignore[no-untyped-def]
    with store.read() as r:
        return current_report(r, trace_id, keep=keep)


def test_report_elides_the_middle_but_counts_everything(store: Store, sample: Trace) -> None:
    full = current_report_of(store, sample.id)
    small = current_report_of(store, sample.id, keep=4)
    assert small.total == full.total and small.items == full.items
    assert len(small.rows) == 4 and small.elided == full.items - 4
    assert [r.index for r in small.rows] == [0, 1, full.items - 2, full.items - 1]
    assert small.request_sha256 is None


def test_call_report_reproduces_the_recorded_request(store: Store, sample: Trace) -> None:
    with store.read() as r:
        calls = r.llm_calls(sample.id)
        reports = [call_report(r, c) for c in calls]
    assert len(calls) > 5
    assert all(rep.matches_record for rep in reports)


def test_bands_sit_after_their_anchor_and_say_what_left(store: Store, sample: Trace) -> None:
    with store.read() as r:
        segs = r.segments(sample.id)
        placed, detached = bands(r, sample.id, segs)
        events = r.compactions(sample.id)
        path = r.main_path_sequences(sample.id)
    assert detached == []
    assert [b.after_row for b in placed] == [path.index(e.at_sequence) for e in events]  # type: ignore[arg-type]
    goal = next(e for e in events if e.level == "goal")
    saved = goal.tokens_before - goal.tokens_after
    assert placed[0].text == (
        f"finished goal 1.1: {len(goal.removed)} messages left the context, −{saved:,} tokens"
    )
    summ = next(e for e in events if e.level == "summary")
    assert placed[1].text.startswith(f"summarized: {summ.messages_before} → {summ.messages_after}")


def test_rewind_before_a_boundary_detaches_it(store: Store, sample: Trace) -> None:
    with store.read() as r:
        goal = next(e for e in r.compactions(sample.id) if e.level == "goal")
    store.rewind(sample.id, goal.removed[0])
    with store.read() as r:
        placed, detached = bands(r, sample.id, r.segments(sample.id))
    assert placed == [] and len(detached) == 2


def test_branches_and_fork_badges(store: Store, sample: Trace) -> None:
    with store.read() as r:
        found = branches(r, sample.id)
    kinds = Counter(b.kind for b in found)
    assert kinds == {"subagent": 1, "compression": 1, "abandoned": 1}
    abandoned = next(b for b in found if b.kind == "abandoned")
    assert abandoned.length == 2 and not abandoned.on_main_path
    badges = fork_badges(found)
    assert badges[abandoned.fork_sequence] == ("abandoned",)


def test_badges_follow_kind_and_branch_fields(store: Store) -> None:
    tr = store.create_trace("b")
    msgs = store.append(
        tr.id,
        [
            NewMessage("assistant", "", kind="injected_context"),
            NewMessage("tool", "x", kind="injected_skill"),
            NewMessage("user", "s", kind="summary"),
            NewMessage("user", "n", kind="nudge"),
            NewMessage("user", "p", kind="placeholder"),
        ],
    )
    assert [badges_of(m) for m in msgs] == [
        ("injected_context",),
        ("injected_skill",),
        ("summary",),
        ("nudge",),
        ("placeholder",),
    ]
    with store.write() as w:
        (sub,) = w.append(tr.id, [NewMessage("user", "q", branch_type="subagent")], parent=0)
        (ref,) = w.append(tr.id, [NewMessage("user", "q", branch_type="reflection")], parent=0)
    assert badges_of(sub) == ("subagent",) and badges_of(ref) == ("side_branch",)
    assert badges_of(msgs[0], ("reflection", "abandoned")) == (
        "injected_context",
        "side_branch",
        "abandoned",
    )


def test_row_preview_shows_tool_calls_and_is_short(store: Store) -> None:
    tr = store.create_trace("p")
    (m,) = store.append(
        tr.id,
        [NewMessage("assistant", "x" * 5000, tool_calls=(ToolCall("c", "read", '{"p": 1}'),))],
    )
    row = row_of(m)
    assert row.preview.startswith('read({"p": 1})') and len(row.preview) <= 160
    assert row.tool_names == ("read",)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=12), st.lists(st.integers(0, 6), max_size=12))
def test_diff_is_a_multiset_difference(before: list[int], after: list[int]) -> None:
    b = [ContextItem(s, "o" if s == 6 else None) for s in before]
    a = [ContextItem(s) for s in after]
    entered, left, kept = diff_items(b, a)
    key = lambda i: (i.sequence, i.content)  # noqa: E731
    assert Counter(map(key, b)) - Counter(map(key, left)) + Counter(map(key, entered)) == Counter(
        map(key, a)
    )
    assert kept == len(a) - len(entered)


def test_search_finds_a_tool_call_and_maps_rows(store: Store, sample: Trace) -> None:
    with store.read() as r:
        segs = r.segments(sample.id)
        result = run_search(r, sample.id, parse_query("tool:apply_patch"), segs)
        path = r.main_path_sequences(sample.id)
    assert result.hits, "the sample calls apply_patch"
    for hit in result.hits:
        assert hit.row == path.index(hit.sequence)


def test_parse_query_fields_and_text() -> None:
    q = parse_query('role:tool goal:1.2 "exact words" more', kind="summary")
    assert (q.role, q.goal_id, q.kind, q.text) == ("tool", "1.2", "summary", "exact words more")
    assert parse_query("").empty


def test_skill_rows_show_compacted_and_reinjected(store: Store, sample: Trace) -> None:
    with store.read() as r:
        rows = skill_rows(r, sample.id)
    assert [(row.reason, row.status) for row in rows] == [
        ("caller", "compacted away"),
        ("reinject", "re-injected"),
    ]


def test_grant_rows_join_refs(store: Store, sample: Trace) -> None:
    with store.read() as r:
        rows = {row.ref_id: row for row in grant_rows(r, sample.id)}
    assert rows["grep-1"].status == "revoked" and "compacted" in rows["grep-1"].revoked_reason
    assert rows["img-1"].status == "not granted" and "1 img" in rows["img-1"].size


def test_goal_outline_fills_in_parents_in_order(store: Store) -> None:
    tr = store.create_trace("g")
    store.append(tr.id, [NewMessage("user", "x", goal_id=g) for g in ["1.10", "1.9", "2", "1.9"]])
    with store.read() as r:
        nodes = goal_outline(r, tr.id)
    assert [n.id for n in nodes] == ["1", "1.9", "1.10", "2"]
    assert [n.messages for n in nodes] == [0, 2, 1, 1]
    assert goal_key("1.10") > goal_key("1.9")


def test_detail_links_call_and_result(store: Store, sample: Trace) -> None:
    with store.read() as r:
        path = list(r.iter_main_path(sample.id))
        call = next(m for m in path if any(c.name == "apply_patch" for c in m.tool_calls))
        result = next(m for m in path if m.tool_call_id == call.tool_calls[0].id)
        d_call = message_detail(r, sample.id, call.sequence)
        d_res = message_detail(r, sample.id, result.sequence)
    assert [link.sequence for link in d_call.links] == [result.sequence]
    assert [link.sequence for link in d_res.links] == [call.sequence]
    assert d_res.format == "diff" and d_call.format == "json"
    assert '"sequence"' in d_res.raw


def test_guess_format() -> None:
    assert guess_format('{"a": 1}') == "json"
    assert guess_format("{not json") == "text"
    assert guess_format("def f():\n    pass") == "python"
    assert guess_format("--- a\n+++ b\n@@ -1 +1 @@") == "diff"


def test_budget_from_metadata_and_defaults(sample: Trace) -> None:
    b = budget_from_metadata(sample.metadata)
    assert b.source == "trace" and b.threshold == int(b.window * b.threshold_ratio)
    assert budget_from_metadata(None) == Budget()
    assert Budget().status(0) == "ok" and Budget().status(40_000) == "over hard"
    marks = [v for _, v in Budget().markers()]
    assert marks == sorted(marks)


def test_limits_words_say_where_the_window_came_from() -> None:
    """Review 10: the window and the limits are named from one place, and truly."""
    defaults = budget_of("ctxlens", None)
    assert defaults.window_text() == "128,000 (defaults)"
    assert defaults.limits_note() == defaults.limits_text() == DEFAULT_LIMITS_TEXT
    run = budget_of("ctxlens", {"budget": {"context_window": 8000}})
    assert run.window_text() == "8,000 (config)" and run.limits_note() == ""
    assert run.limits_text() == "limits from the trace"
    proxied = budget_of("proxy", {"model": "gpt-4o", "proxy": {"api": "chat"}})
    assert proxied.source == "imported" and proxied.window_source == "model-table"
    assert proxied.soft is None and proxied.hard is None and proxied.threshold is None
    assert proxied.limits_note() == ""
    assert proxied.limits_text().endswith("; no runtime budgets on another tool's trace")
    unnamed = budget_of("proxy", {"proxy": {"api": "chat"}})
    assert unnamed.window is None and unnamed.status(10) == "window unknown"


def test_fuzzy() -> None:
    names = ["Rewind to selected message", "Open store…", "Toggle dark theme", "Search"]
    assert fuzzy_filter("rw", names)[0] == 0
    assert fuzzy_filter("dark", names) == [2]
    assert fuzzy_score("zz", "abc") is None
    assert fuzzy_filter("", names) == [0, 1, 2, 3]


def test_fuzzy_ranks_prefix_and_word_starts_above_scattered_matches() -> None:
    labels = [
        "View: Command palette…",  # c-o-m in "Command", p in "palette": scattered
        "Navigate: Back to main path",  # c, o, m, p one per word: scattered
        "Run: Compare traces…",
        "Run: Compact…",
    ]
    assert [labels[i] for i in fuzzy_filter("comp", labels)] == [
        "Run: Compact…",  # both name prefixes; the shorter first
        "Run: Compare traces…",
        "View: Command palette…",  # then the best scattered alignment
        "Navigate: Back to main path",
    ]
    assert match_tier("comp", labels[3]) == PREFIX
    assert match_tier("run comp", labels[3]) == WORD_START
    assert match_tier("pare", labels[2]) == SUBSTRING
    assert match_tier("comp", labels[0]) == SCATTERED
    assert match_tier("zz", labels[0]) is None
    # within the scattered tier, word starts and runs win: "cp" is Command palette's initials
    assert fuzzy_filter("cp", labels)[0] == 0
    assert word_starts("goTo x2") == [True, False, True, False, False, True, True]
    # a consecutive run beats the same letters spread out
    assert (alignment("abc", "xabcx") or 0) > (alignment("abc", "xaxbxcx") or 0)
