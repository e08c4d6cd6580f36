"""System prompt (INJ-1): priority chain, static-first section order, memory limit."""

from __future__ import annotations

import pytest

from core.context.system_prompt import (
    DEFAULT_IDENTITY,
    SECTION_ORDER,
    ToolLine,
    build_system_prompt,
    choose_identity,
)
from core.skills import SkillRegistry

TOOLS = [
    ToolLine("query_events", "Aggregate events per entity.\nLong details that never show."),
    ToolLine("read_ref", "Load a ref into the context."),
]


@pytest.mark.parametrize(
    ("messages", "config", "preset", "expected"),
    [
        ([{"role": "system", "content": "FROM MESSAGES"}], "CONFIG", "PRESET", "messages"),
        ([{"role": "user", "content": "hi"}], "CONFIG", "PRESET", "config"),
        ([], None, "PRESET", "preset"),
        ([], "  ", "PRESET", "preset"),
        ([{"role": "system", "content": ""}], None, None, "default"),
    ],
)
def test_priority_chain(
    messages: list[dict[str, str]], config: str | None, preset: str | None, expected: str
) -> None:
    text, source = choose_identity(messages, config, preset)
    assert source == expected
    wanted = {
        "messages": "FROM MESSAGES",
        "config": "CONFIG",
        "preset": "PRESET",
        "default": DEFAULT_IDENTITY,
    }[expected]
    assert text == wanted


def test_system_message_from_caller_is_used_verbatim() -> None:
    prompt = build_system_prompt(
        messages=[{"role": "system", "content": [{"type": "text", "text": "MINE"}]}],
        config_prompt="CONFIG",
        tools=TOOLS,
    )
    assert prompt.source == "messages"
    assert prompt.text == "MINE"


def test_sections_in_static_first_order_with_one_line_tools() -> None:
    skills = SkillRegistry.load().select()
    memories = [f"memory {i}" for i in range(8)]
    prompt = build_system_prompt(
        config_prompt="You analyse risk.", tools=TOOLS, skills=skills, memories=memories
    )
    assert [s.name for s in prompt.sections] == list(SECTION_ORDER)
    # the sections that never change between calls open and close it
    assert (prompt.sections[0].name, prompt.sections[-1].name) == ("identity", "principles")
    positions = [prompt.text.index(s.text) for s in prompt.sections]
    assert positions == sorted(positions)
    assert prompt.text.startswith("You analyse risk.")
    assert "- query_events: Aggregate events per entity." in prompt.text
    assert "never show" not in prompt.text
    for s in skills:
        assert f"- {s.name}: {s.description}" in prompt.text
    assert [m for m in memories if m in prompt.text] == memories[:5]


def test_empty_sections_are_left_out_and_message_is_tagged() -> None:
    prompt = build_system_prompt()
    assert [s.name for s in prompt.sections] == ["identity", "principles"]
    msg = prompt.to_message("sub_1")
    assert (msg.role, msg.kind, msg.agent_name) == ("system", "system_prompt", "sub_1")
    assert msg.metadata == {"source": "default", "sections": ["identity", "principles"]}


def test_same_inputs_give_identical_bytes() -> None:
    a = build_system_prompt(tools=TOOLS, memories=["m"])
    b = build_system_prompt(tools=list(TOOLS), memories=("m",))
    assert a.text == b.text
