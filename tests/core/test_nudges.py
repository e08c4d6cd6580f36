"""Runtime nudges (INJ-5): budget levels, diminishing returns, todo nag, notices, duplicates."""

from __future__ import annotations

import json
import threading

from hypothesis import given
from hypothesis import strategies as st

from core.context.nudges import (
    BackgroundNotice,
    DiminishingReturns,
    DuplicateDetector,
    NoticeQueue,
    StepMonitors,
    TodoNag,
    TokenBudget,
)
from core.records import NewMessage, ToolCall
from core.store import Store


def test_budget_levels_use_the_defaults() -> None:
    b = TokenBudget()
    assert (b.level(25_599), b.level(25_600)) == (None, "near_soft")
    assert (b.level(31_999), b.level(32_000)) == ("near_soft", "over_soft")
    assert (b.level(39_999), b.level(40_000)) == ("over_soft", "over_hard")


def test_only_the_highest_level_is_injected() -> None:
    b = TokenBudget()
    jump = b.check(45_000)
    assert jump is not None and jump.name == "over_hard"
    assert "final answer" in jump.text and "45,000" in jump.text
    assert b.check(33_000) is None, "a lower level never follows a higher one"


def test_levels_escalate_once_each_and_fire_again_after_a_drop() -> None:
    b = TokenBudget(soft_limit=1000, hard_limit=2000)
    names = [getattr(b.check(t), "name", None) for t in (100, 850, 900, 1100, 1500, 2100, 2200)]
    assert names == [None, "near_soft", None, "over_soft", None, "over_hard", None]
    assert b.check(300) is None  # compaction brought it down
    again = b.check(1200)
    assert again is not None and again.name == "over_soft"


_RANK = {None: -1, "near_soft": 0, "over_soft": 1, "over_hard": 2}


@given(st.lists(st.integers(0, 50_000), max_size=30))
def test_budget_fires_exactly_on_rises_to_a_new_level(tokens: list[int]) -> None:
    b, shadow = TokenBudget(), TokenBudget()
    sent = -1
    for t in tokens:
        level = shadow.level(t)
        got = b.check(t)
        rank = _RANK[level]
        if rank > sent:
            assert got is not None and got.name == level
            sent = rank
        else:
            assert got is None
            sent = min(sent, rank)  # a drop lets the level fire again later


def test_diminishing_returns_needs_three_continuations_and_two_small_deltas() -> None:
    d = DiminishingReturns()
    assert [d.check(x) for x in (100, 100)] == [None, None], "fewer than 3 continuations"
    stop = d.check(100)
    assert stop is not None and stop.name == "diminishing_returns"
    assert "final answer" in stop.text
    assert d.check(10) is None, "fires once"

    d2 = DiminishingReturns()
    assert [d2.check(x) for x in (2000, 100, 900, 100)] == [None, None, None, None]
    assert d2.check(499) is not None


@given(st.lists(st.integers(0, 2000), max_size=20))
def test_diminishing_returns_rule(deltas: list[int]) -> None:
    d = DiminishingReturns()
    fired = [i for i, x in enumerate(deltas) if d.check(x) is not None]
    expected = next(
        (i for i in range(2, len(deltas)) if deltas[i] < 500 and deltas[i - 1] < 500), None
    )
    assert fired == ([] if expected is None else [expected])


def test_todo_nag_after_three_steps_without_todo_write() -> None:
    nag = TodoNag()
    steps = [["query"], ["read_ref"], [], ["todo_write", "query"], ["a"], ["b"], ["c"]]
    fired = [i for i, tools in enumerate(steps) if nag.step(tools) is not None]
    assert fired == [2, 6]


def test_notices_drain_once_in_order_from_other_threads() -> None:
    q = NoticeQueue()

    def worker(i: int) -> None:
        q.push(BackgroundNotice(f"t{i}", "download_paper", i % 2 == 0, f"file {i}"))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    drained = q.drain()
    assert len(drained) == 8 and q.drain() == []
    assert all(n.kind == "notice" for n in drained)
    assert sum("FAILED" in n.text for n in drained) == 4
    msg = drained[0].to_message()
    assert (msg.role, msg.kind, msg.metadata) == ("user", "notice", {"nudge": "background_task"})


def _blocked_result(call: ToolCall, text: str) -> NewMessage:
    """A tool result replacing a blocked call's output (the runner writes its own:
    ``core/run/tool_step.py:call_tool``; this is the message shape a test asserts)."""
    return NewMessage(
        "tool",
        text,
        tool_call_id=call.id,
        name=call.name,
        kind="nudge",
        metadata={"nudge": "duplicate_tool_call"},
    )


def test_duplicate_detection_blocks_the_third_identical_call() -> None:
    d = DuplicateDetector()
    same_a = ToolCall("1", "query", '{"days": 30, "top": 10}')
    same_b = ToolCall("2", "query", '{"top":10,"days":30}')  # same arguments, other spelling
    other = ToolCall("3", "query", '{"days": 7}')
    results = [d.check(c) for c in (same_a, same_b, same_a, same_a, other, same_a)]
    assert [r is not None for r in results] == [False, False, True, True, False, False]
    assert results[2] is not None and "3 times in a row" in results[2]
    err = _blocked_result(same_a, results[2])
    assert (err.role, err.tool_call_id, err.kind) == ("tool", "1", "nudge")
    assert d.detections == 2


def test_monitors_before_a_call_and_state_round_trip() -> None:
    m = StepMonitors(budget=TokenBudget(soft_limit=1000, hard_limit=2000))
    m.notices.push(BackgroundNotice("t1", "parse", True, "ok"))
    first = m.before_model_call(900)
    assert [n.name for n in first.nudges] == ["background_task", "near_soft"]
    for _ in range(3):  # short tool-calling steps are work, never "diminishing returns"
        assert not m.before_model_call(900, (100, ["query"])).final_answer_without_tools
    m.duplicates.check(ToolCall("x", "query", "{}"))
    m.notices.push(BackgroundNotice("t2", "parse", False, "bad"))
    for _ in range(2):  # continuations: replies without tool calls, yet the run goes on
        m.before_model_call(900, (100, []))
    state = json.loads(json.dumps(m.to_state()))
    restored = StepMonitors.from_state(state)
    assert restored.to_state() == m.to_state()
    third = restored.before_model_call(950, (100, []))
    assert [n.name for n in third.nudges] == ["todo_nag", "diminishing_returns"]
    assert third.final_answer_without_tools
    assert restored.before_model_call(950, (100, [])).nudges == (), "each fires once"


def test_nudge_messages_store_as_their_kind(store: Store) -> None:
    tr = store.create_trace("t")
    nudge = TokenBudget().check(50_000)
    assert nudge is not None
    (msg,) = store.append(tr.id, [nudge.to_message(goal_id="1")])
    assert (msg.kind, msg.role, msg.goal_id) == ("nudge", "user", "1")
    assert msg.metadata == {"nudge": "over_hard"}
