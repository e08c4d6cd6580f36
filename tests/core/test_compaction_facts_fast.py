"""Fact extraction's fast paths find exactly what the defining patterns find.

``_candidates`` replaces a scan of the whole text by ``_CANDIDATE`` with ``str.split`` and a
per-chunk search; ``_refs`` reads refs chunk by chunk through a memo. Both are checked here
against the plain definitions on generated texts (Unicode whitespace included).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.bench_compaction import clear_memos
from core.context.compaction import facts

_BITS = st.sampled_from(
    [
        " ",
        "\n",
        "\t",
        "\u00a0",
        "\u2003",
        "\x1c",
        "\u3000",
        "a",
        "Z",
        "é",
        "7",
        "/",
        ":",
        "_",
        "-",
        ".",
        ",",
        "(",
        ")",
        "'",
        '"',
        "~",
        "src/",
        "http://x.io/a",
        "win-1001",
        "ref:3f2a",
        "./run.sh",
        "~/notes.md",
        "a.py",
        "entity_42",
        "--",
        "::",
        "</skill>",
        "<",
        ">",
        "&lt;",
    ]
)
_TEXT = st.lists(_BITS, max_size=60).map("".join)


def _refs_by_definition(text: str) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for chunk in facts._CANDIDATE.findall(text):
        for m in facts.REF_RE.finditer(chunk):
            ref = m.group(0).rstrip(facts._TRAILING)
            if len(ref) > 2:
                out[ref] = None
    return tuple(out)


@settings(max_examples=1000, deadline=None)
@given(_TEXT)
def test_candidates_are_the_pattern_matches(text: str) -> None:
    assert facts._candidates(text) == facts._CANDIDATE.findall(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=5))
def test_refs_through_the_memos_are_the_refs_by_definition(texts: list[str]) -> None:
    clear_memos()
    for text in texts + texts:  # the second round reads from the memos
        assert facts._refs(text) == _refs_by_definition(text)


_LINES = st.lists(
    st.sampled_from(["", "src/a.py", "win-1001 x", "plain", "a\nsrc/a.py"]), max_size=4
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_TEXT, _LINES.map("\n".join)), max_size=24), st.data())
def test_refs_of_many_texts_are_each_texts_refs_merged(
    texts: list[str], data: st.DataObject
) -> None:
    """``refs_in`` skips repeated texts and chunks: the order must not change (a few texts
    take the per-text path, more the one pass)."""
    texts += data.draw(st.lists(st.sampled_from(texts), max_size=8)) if texts else []
    clear_memos()
    merged: dict[str, None] = {}
    for text in texts:
        merged.update(dict.fromkeys(_refs_by_definition(text)))
    assert list(facts.refs_in(texts)) == list(merged)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c d", "e", "f"]), max_size=40, unique=True),
    st.integers(min_value=1, max_value=5),
)
def test_grouped_fact_lines_join_to_the_same_text(done: list[str], group: int) -> None:
    found = facts.Facts(("x/y",), tuple(done[:7]), (), tuple(done))
    assert "\n".join(facts.render(found, group=group)) == "\n".join(facts.render(found))
    assert all(part.count("\n") < group for part in facts.render(found, group=group))
