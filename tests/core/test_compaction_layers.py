"""Each compaction level and layer on hand-built histories (CMP-1, CMP-2, CMP-3, CMP-7)."""

from __future__ import annotations

import asyncio

from bench.histories import History, safe_cut
from core.context.compaction import (
    CompactionConfig,
    Compactor,
    FileParams,
    FileStateCache,
    IdentityParams,
    MicroParams,
    ScriptedSummarizer,
    SnipParams,
    compact_goals,
    inject_identity,
    micro,
    restore_files,
    snip,
    units,
    validity_problems,
)
from core.context.compaction.items import with_items
from core.context.view import View
from core.records import ContextItem

BIG = "x" * 400


def _valid(view: View) -> bool:
    return validity_problems(view.openai()) == []


def _contents(view: View) -> list[str]:
    return [m["content"] for m in view.openai()]


# -- goal compaction (CMP-1) ----------------------------------------------------------------
def _goal_history() -> History:
    h = History()
    h.system()
    h.user("Produce the risk report.")
    h.goal(add="Query the aggregate")
    h.calls([("read_file", {"path": "/data/agg.csv"}, "rows... window win-2002 " + BIG)])
    h.assistant("The aggregate is ready, see /tmp/agg.parquet")
    h.user("Constraint: cite every window")
    h.calls([("fetch", {"q": "x"}, "Error: timeout contacting https://api.example.com/v1")])
    h.goal(done="1", summary="aggregate queried")
    h.goal(add="Write the report", focus="2")
    h.calls([("bash", {"q": "wc"}, "12 lines " + BIG)])
    return h


def test_goal_compaction_keeps_goal_calls_drops_the_rest_and_marks_done() -> None:
    h = _goal_history()
    view, rec = h.view(), h.records()
    res = compact_goals(view, rec)
    after = with_items(view, res.items)
    assert _valid(after)
    msgs = view.messages
    kept = [msgs[i.sequence] for i in res.items if i.sequence is not None]
    # every goal call and result of goal 1 is still there; its other work is gone
    assert all(
        any(c.name == "goal" for c in m.tool_calls)
        for m in kept
        if m.role == "assistant" and m.goal_id == "1" and m.tool_calls
    )
    assert not any(m.name in ("read_file", "fetch") for m in kept)
    assert "The aggregate is ready" not in "".join(_contents(after))
    # user messages always stay, goal 2's messages are untouched
    assert "Constraint: cite every window" in _contents(after)
    assert any(m.name == "bash" for m in kept)
    done = next(i for i in res.items if (i.content or "").startswith("[Goal 1 completed"))
    assert done.content is not None
    assert done.content.splitlines()[0] == "[Goal 1 completed: details cleared]"
    # facts of what left ride on the marker
    for fact in ("win-2002", "/data/agg.csv", "/tmp/agg.parquet", "https://api.example.com/v1"):
        assert fact in done.content
    assert "Failed: fetch: Error: timeout contacting https://api.example.com/v1" in done.content
    assert set(res.removed) == {m.sequence for m in msgs.values()} - {i.sequence for i in res.items}
    again = compact_goals(after, rec)
    assert again.items == res.items and not again.changed, "idempotent"


def test_goal_compaction_waits_for_the_finishing_result() -> None:
    h = _goal_history()
    view = h.view()
    done_seq = next(
        m.sequence
        for m in view.messages.values()
        if m.role == "tool" and "completed 1" in m.content
    )
    without = with_items(
        view, [i for i in view.items if i.sequence != done_seq - 1 and i.sequence != done_seq]
    )
    res = compact_goals(without, h.records())
    assert not res.changed, "no marker to carry the facts: the goal stays"


def test_parallel_work_beside_a_goal_call_becomes_a_placeholder() -> None:
    h = History()
    h.user("task")
    h.goal(add="A")
    h.calls([("goal", {"done": "1", "summary": "ok"}, ""), ("read_file", {"path": "/a.py"}, BIG)])
    res = compact_goals(h.view(), h.records())
    texts = [i.content for i in res.items if i.content]
    assert "[Previous: used read_file]" in texts
    assert _valid(with_items(h.view(), res.items))


def test_goal_modes() -> None:
    h = _goal_history()
    view, rec = h.view(), h.records()
    small = CompactionConfig(window=400, threshold=0.5)
    none = Compactor(
        CompactionConfig(window=400, threshold=0.5, goal_mode="none"), ScriptedSummarizer()
    )
    out = asyncio.run(none.maybe_compact(view, records=rec))
    assert "goal" not in [layer.level for layer in out.layers]
    overflow = Compactor(small, ScriptedSummarizer())
    out = asyncio.run(overflow.maybe_compact(view, records=rec))
    assert out.layers[0].level == "goal"
    assert overflow.on_goal_done(view, "1", rec).status == "not_needed"
    complete = Compactor(CompactionConfig(goal_mode="on_complete"))
    done = complete.on_goal_done(view, "1", rec)
    assert done.compacted and done.applied_level == "goal"


# -- snip --------------------------------------------------------------------------------
def _chat(n: int) -> History:
    h = History()
    h.system()
    h.user("Find the thing. Constraint: be brief")
    for k in range(n):
        if k % 3 == 0:
            h.calls([("read_file", {"path": f"/src/f{k}.py"}, f"content of ref-{k:04d} " + BIG)])
        else:
            h.assistant(f"step {k}")
    return h


def test_snip_keeps_head_and_tail_and_carries_facts() -> None:
    h = _chat(60)
    view = h.view()
    params = SnipParams(max_messages=50, head_keep=3, tail_keep=47, step=10)
    res = snip(view, h.records(), params)
    after = with_items(view, res.items)
    assert _valid(after)
    us = units(view.items, view.messages)
    head = next(u.end for u in us if u.end >= 3)  # the head's last unit stays whole
    assert head == 4, "system, user, and the first call with its result"
    assert res.items[:head] == view.items[:head]
    marker = res.items[head]
    assert marker.kind == "placeholder" and marker.sequence is None
    assert marker.content is not None
    n = len(res.removed)
    assert marker.content.startswith(f"[Snipped {n} earlier messages]")
    assert res.items[head + 1 :] == view.items[head + n :]
    assert any(u.start == head + n for u in us), "the cut is a unit boundary"
    assert 35 <= len(res.items) - head - 1 <= 46, "cut in a step of 10, then to a boundary"
    for seq in res.removed:
        m = view.messages[seq]
        if m.role == "tool":
            assert m.content.split()[2] in marker.content  # "ref-00NN" carried
    assert snip(after, h.records(), params).items == res.items, "idempotent"


def test_snip_cuts_in_steps_so_contexts_between_cuts_are_appends() -> None:
    h = _chat(120)
    view = h.view()
    params = SnipParams(max_messages=50, head_keep=3, tail_keep=47, step=10)
    rec = h.records()
    prev: tuple[ContextItem, ...] | None = None
    cuts = 0
    base = 60
    for end in range(base, len(view.items) + 1):
        res = snip(with_items(view, view.items[:end]), rec, params)
        if prev is not None and res.items[: len(prev)] != prev:
            cuts += 1
        prev = res.items
    assert cuts <= (len(view.items) - base) // 10 + 1, "the prefix changes once per step"


def test_a_second_snip_merges_the_placeholder() -> None:
    h = _chat(80)
    view, rec = h.view(), h.records()
    params = SnipParams(max_messages=30, head_keep=3, tail_keep=27, step=5)
    first = snip(with_items(view, view.items[:60]), rec, params)
    grown = with_items(view, (*first.items, *view.items[60:]))
    second = snip(grown, rec, params)
    placeholders = [i for i in second.items if i.kind == "placeholder"]
    assert len(placeholders) == 1
    total = len(first.removed) + len(second.removed)
    assert (placeholders[0].content or "").startswith(f"[Snipped {total} earlier messages]")
    first_cut = [view.messages[q].content for q in first.removed]
    assert any("ref-0003" in c for c in first_cut)
    assert "ref-0003" in (placeholders[0].content or ""), "facts of the first cut carried on"


# -- micro / aggressive ------------------------------------------------------------------
def test_micro_replaces_old_results_and_keeps_the_recent_ones() -> None:
    h = History()
    h.user("go")
    for k in range(20):
        h.calls([("read_file", {"path": f"/src/f{k}.py"}, f"body {k} " + BIG)])
    h.goal(add="G")
    h.calls([("bash", {"q": "ls"}, "ok")])
    h.calls([("fetch", {"q": "u"}, "Error: 503 from https://x.example.com/a " + BIG)])
    for k in range(3):
        h.calls([("read_file", {"path": f"/src/g{k}.py"}, f"body g{k} " + BIG)])
    view = h.view()
    res = micro(view, MicroParams(keep_recent=8, step=8))
    results = [
        (view.messages[i.sequence], i)
        for i in res.items
        if i.sequence is not None and view.messages[i.sequence].role == "tool"
    ]
    compactable = [(m, i) for m, i in results if m.name != "goal"]
    assert len(compactable) == 25
    cut = ((25 - 8) // 8) * 8
    replaced = [m.sequence for m, i in compactable[:cut] if i.content is not None]
    assert replaced == [m.sequence for m, _ in compactable[:cut]]
    assert all(i.content is None for _, i in compactable[cut:])
    assert next(i for m, i in compactable if m.name == "read_file").content == (
        "[Previous: used read_file]"
    )
    assert all(i.content is None for m, i in results if m.name == "goal"), "goal is exempt"
    assert micro(with_items(view, res.items), MicroParams(8, 8)).items == res.items
    aggressive = micro(view, MicroParams(keep_recent=2, step=1), "aggressive")
    untouched = [i for m, i in results if m.name != "goal" and i.content is None]
    assert (
        sum(
            1
            for i in aggressive.items
            if i.content is None
            and i.sequence is not None
            and view.messages[i.sequence].role == "tool"
            and view.messages[i.sequence].name not in ("goal", "bash")
        )
        == 2
    )
    assert untouched


def test_micro_keeps_short_results_and_carries_failures() -> None:
    h = History()
    h.user("go")
    h.calls([("bash", {"q": "true"}, "ok")])
    h.calls([("fetch", {"q": "u"}, "Error: 503 from https://x.example.com/a\n" + BIG)])
    for k in range(4):
        h.calls([("read_file", {"path": f"/f{k}"}, BIG)])
    view = h.view()
    res = micro(view, MicroParams(keep_recent=1, step=1))
    by_seq = {i.sequence: i for i in res.items}
    ok = next(m for m in view.messages.values() if m.content == "ok")
    assert by_seq[ok.sequence].content is None, "a placeholder longer than the result is not used"
    fail = next(m for m in view.messages.values() if m.content.startswith("Error: 503"))
    assert by_seq[fail.sequence].content == (
        "[Previous: used fetch]\nRefs: https://x.example.com/a\n"
        "Failed: fetch: Error: 503 from https://x.example.com/a"
    )


# -- identity ----------------------------------------------------------------------------
def test_identity_block_when_few_messages_remain() -> None:
    h = History()
    h.system("You are Ada, a data analyst.\n\nRules follow.")
    h.user("task")
    view = h.view()
    res = inject_identity(view, IdentityParams())
    assert res.items[1].kind == "identity" and res.items[1].role == "system"
    assert (res.items[1].content or "").startswith("[Identity] You are Ada, a data analyst.")
    assert inject_identity(with_items(view, res.items), IdentityParams()).items == res.items
    long = _chat(5).view()
    assert not inject_identity(long, IdentityParams()).changed


# -- units and the validity oracle (CMP-3) -------------------------------------------------
def test_units_and_safe_cut() -> None:
    h = History()
    h.user("u")
    h.calls([("a", {}, "1"), ("b", {}, "2")], duplicates=[0])
    h.assistant("done")
    view = h.view()
    us = units(view.items, view.messages)
    assert [(u.start, u.end) for u in us] == [(0, 1), (1, 5), (5, 6)]
    assert [safe_cut(us, i) for i in range(7)] == [0, 1, 1, 1, 1, 5, 6]


def test_validity_oracle_names_each_problem() -> None:
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
        ],
    }
    res1 = {"role": "tool", "tool_call_id": "c1", "content": "x"}
    res2 = {"role": "tool", "tool_call_id": "c2", "content": "y"}
    user = {"role": "user", "content": "hi"}
    assert validity_problems([user, call, res1, res2, user]) == []
    assert validity_problems([user, call, res1]) == [], "the last pending call is allowed"
    assert validity_problems([user, call, res1, user]) == [
        "message 1: tool call 'c2' has no result"
    ]
    assert validity_problems([user, res1]) == [
        "message 1: tool result 'c1' has no call right before it"
    ]
    assert validity_problems([call, res1, user, res2]) == [
        "message 0: tool call 'c2' has no result",
        "message 3: tool result 'c2' has no call right before it",
    ]


# -- file cache (CMP-7) -------------------------------------------------------------------
def test_file_cache_is_lru_bounded_by_entries_and_bytes() -> None:
    cache = FileStateCache(max_entries=3, max_bytes=100)
    for k in range(4):
        cache.record(f"/f{k}", "a" * 10)
    assert [f.path for f in cache.recent(5)] == ["/f3", "/f2", "/f1"]
    cache.get("/f1")
    cache.record("/big", "b" * 85)
    assert [f.path for f in cache.recent(5)] == ["/big", "/f1"] and cache.bytes == 95
    cache.record("/huge", "c" * 101)
    assert cache.get("/huge") is None, "a file over the byte limit is not cached"
    default = FileStateCache()
    assert (default.max_entries, default.max_bytes) == (100, 25 * 1024 * 1024)


def test_restore_after_summary_brings_back_recent_files() -> None:
    h = History()
    h.system()
    h.user("task")
    for k in range(7):
        h.calls([("read_file", {"path": f"/src/f{k}.py"}, f"# file {k}\n" + "y" * 5000)])
    h.calls([("read_file", {"path": "/src/missing.py"}, "Error: no such file")])
    view = h.view()
    cache = FileStateCache.from_messages(h.messages(), FileParams())
    assert [f.path for f in cache.recent(2)] == ["/src/f6.py", "/src/f5.py"]
    compactor = Compactor(CompactionConfig(), ScriptedSummarizer(), files=cache)
    out = asyncio.run(compactor.compact(view, "summary", h.records()))
    assert out.compacted
    kinds = [i.kind for i in out.items]
    assert kinds[-2:] == ["summary", "file_restore"]
    block = out.items[-1].content or ""
    assert [ln for ln in block.splitlines() if ln.startswith("[Restored")] == [
        f"[Restored after compaction: /src/f{k}.py]" for k in (6, 5, 4, 3, 2)
    ]
    assert block.count("y" * 3990) == 5 and "y" * 4000 + "y" not in block
    res = restore_files(out.after, cache.recent(5), FileParams(), 3)
    assert not res.changed, "files already visible are not restored twice"
