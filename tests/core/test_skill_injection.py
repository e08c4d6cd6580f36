"""Caller skill injection and re-injection (INJ-3) on real stores."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.context.skill_injection import (
    apply_skill_needs,
    inject_skill,
    pending_skill_injections,
    record_model_skill_load,
    skill_presence,
    skills_to_inject,
)
from core.context.view import current_items, current_view
from core.records import CompactionEvent, ContextItem, NewMessage, SkillInjection, ToolCall
from core.skills import SkillRegistry
from core.store import Store

SKILL = "risk_analysis_strategy"


def _chat(n: int, start: int = 0) -> list[NewMessage]:
    return [
        NewMessage("user" if i % 2 == 0 else "assistant", f"msg {i}")
        for i in range(start, start + n)
    ]


def _trace_with_skill(store: Store, registry: SkillRegistry) -> tuple[str, SkillInjection]:
    tr = store.create_trace("t")
    store.append(tr.id, [NewMessage("system", "sys"), NewMessage("user", "task")])
    with store.write() as w:
        record, _ = inject_skill(w, tr.id, registry, SKILL, "caller")
    return tr.id, record


def _compact_dropping(store: Store, trace_id: str, drop: set[int]) -> CompactionEvent:
    """A compaction boundary whose context_after leaves out the ``drop`` sequences."""
    with store.read() as r:
        items, _ = current_items(r, trace_id)
        head = r.trace(trace_id).head
    kept = tuple(i for i in items if i.sequence not in drop)
    with store.write() as w:
        return w.record_compaction(
            CompactionEvent(
                trace_id, "summary", head, tuple(sorted(drop)), kept, 0, 0, len(items), len(kept)
            )
        )


def test_injection_is_a_synthetic_skill_call_and_result(store: Store) -> None:
    registry = SkillRegistry.load()
    trace_id, record = _trace_with_skill(store, registry)
    with store.read() as r:
        msgs = current_view(r, trace_id).openai()
        stored = r.skill_injections(trace_id)
        call_msg = r.message(trace_id, record.call_sequence or 0)
        result_msg = r.message(trace_id, record.message_sequence)
    assert len(stored) == 1
    got = stored[0]
    assert (got.skill, got.reason) == (SKILL, "caller")
    assert (got.message_sequence, got.call_sequence) == (
        record.message_sequence,
        record.call_sequence,
    )
    call = msgs[-2]["tool_calls"][0]
    assert call["function"]["name"] == "skill"
    assert json.loads(call["function"]["arguments"]) == {"name": SKILL}
    assert msgs[-1] == {
        "role": "tool",
        "content": result_msg.content,
        "tool_call_id": call["id"],
    }
    assert registry.get(SKILL).body.strip() in result_msg.content
    assert call_msg.kind == result_msg.kind == "injected_skill"
    assert result_msg.parent_sequence == call_msg.sequence


def test_fresh_skill_needs_nothing_then_reinjects_after_compaction(store: Store) -> None:
    registry = SkillRegistry.load()
    trace_id, record = _trace_with_skill(store, registry)
    store.append(trace_id, _chat(4))
    with store.read() as r:
        assert pending_skill_injections(r, trace_id, [SKILL]) == []

    _compact_dropping(store, trace_id, {record.call_sequence or -1, record.message_sequence})
    with store.read() as r:
        needs = pending_skill_injections(r, trace_id, [SKILL])
    assert [(n.skill, n.reason) for n in needs] == [(SKILL, "reinject")]
    assert "compacted away" in needs[0].why
    with store.write() as w:
        apply_skill_needs(w, trace_id, registry, needs)
    with store.read() as r:
        assert pending_skill_injections(r, trace_id, [SKILL]) == []
        records = r.skill_injections(trace_id)
        view = current_view(r, trace_id)
    assert [x.reason for x in records] == ["caller", "reinject"]
    assert records[-1].message_sequence in view.sequences
    call_ids = [c["id"] for m in view.openai() for c in m.get("tool_calls", [])]
    assert len(call_ids) == len(set(call_ids)), "synthetic call ids never repeat"


def test_reinjects_when_older_than_the_recency_window(store: Store) -> None:
    registry = SkillRegistry.load()
    trace_id, _ = _trace_with_skill(store, registry)
    store.append(trace_id, _chat(8))
    with store.read() as r:
        # the result is 9th from the end: fresh for a window of 10, stale for 8
        assert pending_skill_injections(r, trace_id, [SKILL], recency_threshold=10) == []
        assert pending_skill_injections(r, trace_id, [SKILL], recency_threshold=9) == []
        stale = pending_skill_injections(r, trace_id, [SKILL], recency_threshold=8)
    assert [n.reason for n in stale] == ["reinject"] and "older" in stale[0].why


def test_age_counts_the_submitted_list_not_sequence_numbers(store: Store) -> None:
    registry = SkillRegistry.load()
    trace_id, record = _trace_with_skill(store, registry)
    store.append(trace_id, _chat(30))
    with store.read() as r:
        items, _ = current_items(r, trace_id)
        assert pending_skill_injections(r, trace_id, [SKILL], recency_threshold=10)
    # compaction removes 25 conversation messages after the skill: now it is recent again
    after = [i.sequence for i in items if i.sequence is not None]
    start = after.index(record.message_sequence) + 1
    _compact_dropping(store, trace_id, set(after[start : start + 25]))
    with store.read() as r:
        assert pending_skill_injections(r, trace_id, [SKILL], recency_threshold=10) == []


def test_placeholder_content_does_not_count_as_present(store: Store) -> None:
    registry = SkillRegistry.load()
    trace_id, record = _trace_with_skill(store, registry)
    with store.read() as r:
        items, _ = current_items(r, trace_id)
        records = r.skill_injections(trace_id)
    placeholder = tuple(
        ContextItem(i.sequence, "[Previous: used skill]")
        if i.sequence == record.message_sequence
        else i
        for i in items
    )
    needs = skills_to_inject([SKILL], placeholder, records)
    assert [n.reason for n in needs] == ["reinject"] and "placeholder" in needs[0].why


def test_skill_loaded_by_the_model_satisfies_the_caller(store: Store) -> None:
    registry = SkillRegistry.load()
    tr = store.create_trace("t")
    call = ToolCall("m1", "skill", json.dumps({"name": SKILL}))
    msgs = store.append(
        tr.id,
        [
            NewMessage("user", "task"),
            NewMessage("assistant", "", tool_calls=(call,)),
            NewMessage("tool", "skill text", tool_call_id="m1", name="skill"),
        ],
    )
    with store.read() as r:
        assert [n.reason for n in pending_skill_injections(r, tr.id, [SKILL])] == ["caller"]
    with store.write() as w:
        record_model_skill_load(w, tr.id, SKILL, msgs[1].sequence, msgs[2].sequence)
    with store.read() as r:
        assert pending_skill_injections(r, tr.id, [SKILL, SKILL]) == []
        assert r.skill_injections(tr.id)[0].reason == "model"
    assert registry.find(SKILL) is not None


def test_several_skills_are_chained_in_order(store: Store) -> None:
    registry = SkillRegistry.load()
    tr = store.create_trace("t")
    (user,) = store.append(tr.id, [NewMessage("user", "task")])
    wanted = ["goal_planning", SKILL]
    with store.read() as r:
        needs = pending_skill_injections(r, tr.id, wanted)
    with store.write() as w:
        recs = apply_skill_needs(w, tr.id, registry, needs, parent=user.sequence)
    with store.read() as r:
        path = r.main_path_sequences(tr.id)
        assert [x.skill for x in r.skill_injections(tr.id)] == wanted
    assert path == [
        user.sequence,
        *(s for x in recs for s in (x.call_sequence, x.message_sequence)),
    ]


def test_side_branch_injection_stays_off_the_main_path(store: Store) -> None:
    registry = SkillRegistry.load()
    tr = store.create_trace("t")
    (user,) = store.append(tr.id, [NewMessage("user", "task")])
    with store.write() as w:
        _, msgs = inject_skill(
            w,
            tr.id,
            registry,
            SKILL,
            parent=user.sequence,
            branch_type="reflection",
            branch_id="r1",
        )
    with store.read() as r:
        assert r.main_path_sequences(tr.id) == [user.sequence]
        assert [m.sequence for m in r.all_messages(tr.id) if m.branch_id == "r1"] == [
            m.sequence for m in msgs
        ]


# -- the decision as a property ---------------------------------------------------------
def _oracle(
    skill: str, items: list[ContextItem], records: list[SkillInjection], threshold: int
) -> str | None:
    """Independent restatement of the rule: None = fresh, else the expected reason."""
    mine = [r for r in records if r.skill == skill]
    if not mine:
        return "caller"
    visible_positions = [
        len(items) - idx
        for idx, it in enumerate(items)
        if it.content is None and any(it.sequence == r.message_sequence for r in mine)
    ]
    if not visible_positions:
        return "reinject"
    return None if min(visible_positions) <= threshold else "reinject"


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(0, 40),
    picks=st.lists(st.tuples(st.integers(0, 39), st.sampled_from("ab")), max_size=5),
    drop=st.sets(st.integers(0, 39)),
    override=st.sets(st.integers(0, 39), max_size=3),
    threshold=st.integers(1, 15),
)
def test_decision_matches_the_rule(
    n: int,
    picks: list[tuple[int, str]],
    drop: set[int],
    override: set[int],
    threshold: int,
) -> None:
    records = [SkillInjection("t", s, seq, None, "caller") for seq, s in picks]
    items = [
        ContextItem(s, "[placeholder]" if s in override else None)
        for s in range(n)
        if s not in drop
    ]
    needs = {x.skill: x.reason for x in skills_to_inject(["a", "b"], items, records, threshold)}
    for skill in "ab":
        assert needs.get(skill) == _oracle(skill, items, records, threshold)


def test_presence_of_each_record_for_the_skills_panel(store: Store) -> None:
    registry = SkillRegistry.load()
    trace_id, first = _trace_with_skill(store, registry)
    _compact_dropping(store, trace_id, {first.call_sequence or -1, first.message_sequence})
    with store.write() as w:
        second, _ = inject_skill(w, trace_id, registry, "goal_planning")
    with store.read() as r:
        items, _ = current_items(r, trace_id)
        records = r.skill_injections(trace_id)
    items = tuple(
        ContextItem(i.sequence, "[cleared]") if i.sequence == second.message_sequence else i
        for i in items
    )
    states = [(rec.skill, state) for rec, state in skill_presence(items, records)]
    assert states == [(SKILL, "compacted away"), ("goal_planning", "placeholder")]
