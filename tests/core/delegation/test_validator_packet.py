"""DEL-4: the validator packet's budget, order, exclusions and the ``unknown`` rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.delegation.config import DelegationLimits
from core.delegation.validator import (
    FixedParts,
    PacketPart,
    assemble_packet,
    history_parts,
    parse_verdict,
)
from core.records import Message, ToolCall


def fixed(size: int) -> FixedParts:
    return FixedParts("A" * size, "B", "R", "P", (("out.csv", "x,y"),), "root answer")


@given(
    fixed_size=st.integers(0, 600),
    sizes=st.lists(st.integers(0, 200), max_size=30),
    limit=st.integers(1, 1_000),
)
def test_packet_budget_order_and_unknown(fixed_size: int, sizes: list[int], limit: int) -> None:
    history = [PacketPart(f"m{n}", "h" * s, n) for n, s in enumerate(sizes)]
    packet = assemble_packet(
        fixed(fixed_size), history, (), DelegationLimits(validator_chars=limit)
    )
    assert [p.text for p in packet.fixed] == [p.text for p in fixed(fixed_size).parts()]
    if packet.over_limit:
        assert packet.history == ()
        assert len(packet.left_out) == len(history)
        return
    assert packet.chars <= limit
    chosen = [p.sequence for p in packet.history]
    assert chosen == [p.sequence for p in history[len(history) - len(chosen) :]]  # newest
    assert len(chosen) + len(packet.left_out) == len(history)
    if packet.left_out:  # the next older one really did not fit
        nxt = history[len(history) - len(chosen) - 1]
        assert packet.chars + nxt.chars > limit


def _msg(seq: int, role: str, content: str = "", **kw: object) -> Message:
    base: dict[str, object] = {
        "parts": None,
        "tool_calls": (),
        "tool_call_id": None,
        "name": None,
        "goal_id": None,
        "kind": "message",
        "branch_type": None,
        "branch_id": None,
        "agent_name": "main",
        "token_count": 0,
        "usage": None,
        "created_at": 0.0,
        "metadata": None,
    }
    return Message("t", seq, seq - 1 if seq else None, role, content, **{**base, **kw})  # type: ignore[arg-type]


def test_side_branches_reasoning_and_synthetic_context_stay_out() -> None:
    msgs = [
        _msg(0, "system", "prompt", kind="system_prompt"),
        _msg(1, "user", "task"),
        _msg(
            2,
            "assistant",
            "",
            parts=({"type": "reasoning", "text": "SECRET"}, {"type": "text", "text": "visible"}),
            tool_calls=(ToolCall("c1", "read_context_ref", '{"ref_id": "r"}'),),
        ),
        _msg(3, "tool", "ref content", name="read_context_ref", tool_call_id="c1"),
        _msg(4, "assistant", "side thoughts", branch_type="reflection", branch_id="b"),
        _msg(5, "tool", "now", kind="injected_context", name="get_current_context"),
    ]
    parts, excluded = history_parts(msgs)
    text = "\n".join(p.text for p in parts)
    assert "SECRET" not in text and "side thoughts" not in text and "now" not in text
    assert "visible" in text and "ref content" in text and "read_context_ref" in text
    reasons = {x.sequence: x.reason for x in excluded}
    assert reasons[4] == "reflection side branch"
    assert reasons[5].startswith("synthetic")


def test_verdicts() -> None:
    assert parse_verdict("Verdict: PASS. fine") == "pass"
    assert parse_verdict("I think verdict: fail") == "fail"
    assert parse_verdict("looks good") == "unknown"
