"""Issue 21: search across traces on both backends (SQLite FTS5, PostgreSQL GIN).

Traces are written through the store's writer (messages with tool calls, a compaction,
an errored model call); expected hits are derived from what was written.
"""

from __future__ import annotations

import pytest

from core.errors import InvalidInputError
from core.records import LlmCall, NewMessage, ToolCall
from core.search.engine import search
from core.search.query import parse
from core.store import Store


def _trace(store: Store, title: str, source: str, words: list[str], model: str) -> str:
    tr = store.create_trace(title, source=source)
    msgs = [NewMessage(role="user", content=f"please {w} the report") for w in words]
    msgs.append(
        NewMessage(
            role="assistant",
            content="",
            tool_calls=(ToolCall("c1", "render_chart", '{"entity": "kestrel"}'),),
        )
    )
    msgs.append(NewMessage(role="tool", content="chart ok", tool_call_id="c1", name="render_chart"))
    store.append(tr.id, msgs)
    with store.write() as w:
        w.record_llm_call(
            LlmCall(
                trace_id=tr.id, call_index=0, context=(), request_sha256="0" * 64, model=model,
                head_sequence=0,
                usage={"prompt_tokens": 2_000_000, "completion_tokens": 10,
                       "prompt_tokens_details": {"cached_tokens": 0}},
                error="boom" if source == "codex" else None,
            )
        )  # fmt: skip
    return tr.id


@pytest.fixture
def three(store: Store) -> dict[str, str]:
    return {
        "a": _trace(store, "alpha run", "ctxlens", ["summarize", "translate"], "gpt-4o"),
        "b": _trace(store, "beta run", "claude-code", ["translate"], "claude-sonnet-4"),
        "c": _trace(store, "gamma run", "codex", ["archive"], "mystery-model"),
    }


def _found(store: Store, text: str) -> set[tuple[str, int | None]]:
    return {(h.trace_id, h.sequence) for h in search(store, parse(text)).hits}


def test_words_find_messages_in_every_trace_newest_first(
    store: Store, three: dict[str, str]
) -> None:
    hits = search(store, parse("translate")).hits
    assert [(h.trace_id, h.sequence) for h in hits] == [(three["b"], 0), (three["a"], 1)]
    assert hits[0].role == "user" and "translate" in hits[0].snippet
    assert _found(store, "transl*") == _found(store, "translate")  # a prefix, asked for
    assert _found(store, "transl") == set()  # whole words otherwise
    assert _found(store, "translate report") == _found(store, "translate")
    assert _found(store, "translate nothinglikethis") == set()


def test_tool_calls_and_tool_names_are_searched(store: Store, three: dict[str, str]) -> None:
    by_text = _found(store, "kestrel")  # a tool call's arguments
    # the assistant's call follows the user messages: a has two, b and c one
    assert by_text == {(three["a"], 2), (three["b"], 1), (three["c"], 1)}
    by_tool = _found(store, "tool:render_chart")  # the call and its result, in each trace
    assert by_tool == by_text | {(three["a"], 3), (three["b"], 2), (three["c"], 2)}


def test_a_tool_name_outside_ascii_is_found(store: Store) -> None:
    """A run stores tool calls as ``json.dumps`` writes them (``\\u00ed`` for ``í``); the
    filter finds the call and its result by the name as the user types it."""
    tr = store.create_trace("accents", source="ctxlens")
    call = ToolCall("c1", "wríte_note", '{"text": "x"}')
    store.append(
        tr.id,
        [
            NewMessage(role="user", content="note it"),
            NewMessage(role="assistant", content="", tool_calls=(call,)),
            NewMessage(role="tool", content="ok", tool_call_id="c1", name="wríte_note"),
        ],
    )
    assert _found(store, "tool:wríte_note") == {(tr.id, 1), (tr.id, 2)}
    assert _found(store, "tool:write_note") == set()


def test_filters_combine(store: Store, three: dict[str, str]) -> None:
    assert _found(store, "translate source:claude-code") == {(three["b"], 0)}
    assert _found(store, "chart role:tool model:gpt-4o") == {(three["a"], 3)}
    assert _found(store, "has:error") == {(three["c"], None)}
    assert _found(store, "has:compaction") == set()
    assert _found(store, f"trace:{three['a'][:6]} role:user") == {
        (three["a"], 0),
        (three["a"], 1),
    }
    assert _found(store, "after:2999-01-01") == set()


def test_cost_and_token_bounds(store: Store, three: dict[str, str]) -> None:
    # 2M prompt tokens: gpt-4o $5.00 + output, claude-sonnet-4 $6.00 + output, unknown: none
    assert _found(store, "cost>5.5") == {(three["b"], None)}
    assert _found(store, "cost<5.5") == {(three["a"], None)}
    assert {tid for tid, _ in _found(store, "tokens>1000000")} == set(three.values())


def test_appended_messages_are_found_by_the_next_search(
    store: Store, three: dict[str, str]
) -> None:
    assert _found(store, "zeppelin") == set()
    store.append(three["c"], [NewMessage(role="user", content="a zeppelin appears")])
    assert _found(store, "zeppelin") == {(three["c"], 3)}


@pytest.mark.parametrize(
    "text", ["cost>lots", "has:everything", "after:yesterday", 'quote"d "nope']
)
def test_bad_queries(store: Store, text: str) -> None:
    if text.startswith("quote"):  # an unbalanced quote is searched as words, not an error
        assert search(store, parse(text)).hits == ()
        return
    with pytest.raises(InvalidInputError):
        parse(text)


def test_fts_operators_in_the_text_are_words(store: Store, three: dict[str, str]) -> None:
    assert search(store, parse('NOT OR "AND" NEAR(x) * ^')).hits == ()
