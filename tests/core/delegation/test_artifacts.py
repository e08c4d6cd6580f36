"""DEL-4's resolved artifacts and the root candidate answer: what a report names is found
in the child's own trace, whole; the root's newest main-path text is its candidate."""

from __future__ import annotations

from core.delegation.artifacts import UNRESOLVED, named_artifacts, resolve_artifacts
from core.delegation.candidate import root_candidate
from core.records import ContextRef, ToolCall
from tests.core.delegation.test_validator_packet import _msg

BIG = "row\n" * 5_000


def test_report_names_artifacts_in_order_once() -> None:
    report = "Done.\nArtifact: ranking.md\n- artifacts: `out-1`, ranking.md, sc_A3_0_x\nthe end"
    assert named_artifacts(report) == ("ranking.md", "out-1", "sc_A3_0_x")
    assert named_artifacts("no artifact here") == ()


def test_each_kind_resolves_to_its_whole_content() -> None:
    msgs = [
        _msg(
            1,
            "assistant",
            tool_calls=(
                ToolCall("w1", "write_file", '{"path": "a.md", "content": "old"}'),
                ToolCall("r1", "read_file", '{"path": "rules.md"}'),
                ToolCall("q1", "query", "{}"),
            ),
        ),
        _msg(2, "tool", "Wrote a.md", tool_call_id="w1"),
        _msg(3, "tool", "the rules", tool_call_id="r1"),
        _msg(
            4,
            "tool",
            "slim view",
            tool_call_id="q1",
            metadata={"slimmed": True, "refs": ["win-1", "out-1"]},
        ),
        _msg(
            5,
            "assistant",
            tool_calls=(ToolCall("w2", "write_file", '{"path": "a.md", "content": "new"}'),),
        ),
        _msg(6, "tool", "Wrote a.md", tool_call_id="w2"),
    ]
    refs = [
        ContextRef("win-1", "t", "evidence_window", "w", content="window rows"),
        ContextRef("out-1", "t", "tool_output", "full", content=BIG),
    ]
    names = ("a.md", "rules.md", "q1", "win-1", "elsewhere.md")
    got = {a.name: a for a in resolve_artifacts(names, msgs, refs)}
    assert (got["a.md"].text, got["a.md"].source) == ("new", "file written #5")  # newest
    assert (got["rules.md"].text, got["rules.md"].source) == ("the rules", "file read #3")
    assert got["q1"].text == BIG and got["q1"].source == "tool result #4"  # not the slim view
    assert got["win-1"].text == "window rows" and got["win-1"].source == "ref win-1"
    assert got["elsewhere.md"].text == UNRESOLVED and not got["elsewhere.md"].resolved


def test_root_candidate_is_the_newest_main_path_text() -> None:
    msgs = [
        _msg(1, "user", "task"),
        _msg(2, "assistant", "first idea"),
        _msg(3, "assistant", "side", branch_type="reflection", branch_id="b"),
        _msg(
            4,
            "assistant",
            "",
            parts=({"type": "reasoning", "text": "SECRET"}, {"type": "text", "text": "better"}),
        ),
        _msg(5, "assistant", "", tool_calls=(ToolCall("c", "agent", "{}"),)),
    ]
    found = root_candidate(msgs)
    assert (found.text, found.sequence) == ("better", 4)
    assert root_candidate(msgs[:1]).text == "" and root_candidate(msgs[:1]).sequence is None
