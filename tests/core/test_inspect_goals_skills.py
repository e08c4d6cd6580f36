"""The goals pane's nodes and the skills panel's states, checked against the store directly."""

from __future__ import annotations

from collections import Counter

from core.context.compaction import apply_sync
from core.context.skill_injection import inject_skill, skill_presence
from core.context.view import current_items
from core.goals import goal_tree_at
from core.inspector.goals import goal_outline, subtree_messages
from core.inspector.panels import skill_rows
from core.records import GoalEvent, NewMessage, ToolCall
from core.skills import SkillRegistry
from core.store import Store
from tests.sample_trace import write_sample


def _path_counts(store: Store, trace_id: str) -> Counter[str]:
    with store.read() as r:
        return Counter(m.goal_id for m in r.iter_main_path(trace_id) if m.goal_id)


def test_outline_of_the_sample_has_statuses_focus_summaries_and_path_counts(
    store: Store,
) -> None:
    tr = write_sample(store)
    with store.read() as r:
        nodes = goal_outline(r, tr.id)
        tree = goal_tree_at(r, tr.id)
    counts = _path_counts(store, tr.id)
    assert [n.id for n in nodes] == [g.id for g in tree.goals]
    for n in nodes:
        g = tree.get(n.id)
        assert g is not None
        assert (n.status, n.title, n.summary, n.parent) == (g.status, g.title, g.summary, g.parent)
        assert n.focus == (g.id == tree.focus)
        assert n.messages == counts.get(n.id, 0)
    statuses = {n.status for n in nodes}
    assert {"completed", "in_progress", "abandoned"} <= statuses
    assert sum(n.focus for n in nodes) == 1
    done = next(n for n in nodes if n.status == "completed" and n.summary)
    assert done.summary in done.detail() and "summary:" in done.detail()
    assert subtree_messages(nodes, "1") == sum(v for k, v in counts.items() if k.startswith("1"))


def test_rewind_before_a_goal_event_forgets_it(store: Store) -> None:
    tr = write_sample(store)
    with store.read() as r:
        events = r.goal_events(tr.id)
    done_2 = next(e for e in events if e.op == "done" and e.goal_id == "2")
    store.rewind(tr.id, done_2.sequence - 1)
    with store.read() as r:
        nodes = {n.id: n for n in goal_outline(r, tr.id)}
    assert nodes["2"].status == "in_progress" and nodes["2"].focus
    assert nodes["4"].status == "pending", "the abandon happened after the rewind point"
    counts = _path_counts(store, tr.id)
    assert {k: n.messages for k, n in nodes.items() if n.messages} == dict(counts)


def test_ids_only_on_messages_still_make_a_tree(store: Store) -> None:
    tr = store.create_trace("imported")
    store.append(tr.id, [NewMessage("user", "x", goal_id=g) for g in ["1.2.1", "3", "1.2.1"]])
    with store.read() as r:
        nodes = goal_outline(r, tr.id)
    assert [(n.id, n.parent, n.messages, n.status) for n in nodes] == [
        ("1", None, 0, ""),
        ("1.2", "1", 0, ""),
        ("1.2.1", "1.2", 2, ""),
        ("3", None, 1, ""),
    ]
    assert "status unknown" in nodes[2].detail()


def test_events_and_message_only_ids_are_merged(store: Store) -> None:
    tr = store.create_trace("t")
    (m,) = store.append(tr.id, [NewMessage("user", "plan", goal_id="1")])
    with store.write() as w:
        w.add_goal_event(GoalEvent(tr.id, m.sequence, "add", "1", {"title": "Plan"}))
        w.add_goal_event(GoalEvent(tr.id, m.sequence, "focus", "1"))
    store.append(tr.id, [NewMessage("assistant", "x", goal_id="7.1")])
    with store.read() as r:
        nodes = goal_outline(r, tr.id)
    assert [(n.id, n.status, n.focus) for n in nodes] == [
        ("1", "in_progress", True),
        ("7", "", False),
        ("7.1", "", False),
    ]


# -- skills ---------------------------------------------------------------------------
def _expected_states(store: Store, trace_id: str) -> list[str]:
    """Independently: ``skill_presence`` over the full current item list."""
    with store.read() as r:
        items, _ = current_items(r, trace_id)
        records = r.skill_injections(trace_id)
    out = []
    for rec, state in skill_presence(items, records):
        out.append("re-injected" if state == "present" and rec.reason == "reinject" else state)
    return out


def test_skill_rows_match_presence_in_the_full_context_on_the_sample(store: Store) -> None:
    tr = write_sample(store)
    with store.read() as r:
        rows = skill_rows(r, tr.id)
    assert [row.status for row in rows] == _expected_states(store, tr.id)
    assert [row.status for row in rows] == ["compacted away", "re-injected"]
    assert rows[0].note == f"reinject as #{rows[1].message_sequence}"
    assert rows[0].sequences == (rows[0].call_sequence, rows[0].message_sequence)


def test_a_micro_compacted_skill_is_a_placeholder(store: Store) -> None:
    tr = store.create_trace("t")
    store.append(tr.id, [NewMessage("system", "sys"), NewMessage("user", "task")])
    with store.write() as w:
        inject_skill(w, tr.id, SkillRegistry.load(), "risk_analysis_strategy", "caller")
    for k in range(20):
        call = ToolCall(f"c{k}", "read_file", f'{{"path": "f{k}.txt"}}')
        store.append(
            tr.id,
            [
                NewMessage("assistant", "", tool_calls=(call,)),
                NewMessage("tool", f"contents {k} " * 40, tool_call_id=f"c{k}", name="read_file"),
            ],
        )
    pv = apply_sync(store, tr.id, "micro")
    assert pv.applied
    with store.read() as r:
        rows = skill_rows(r, tr.id)
    assert [row.status for row in rows] == ["placeholder"] == _expected_states(store, tr.id)
