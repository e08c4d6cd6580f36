"""Counting a text from its parts (``TokenCounter.count_joined``, issue 20): the summary
block's body repeats across a run's steps, so only its head and narrative are encoded.
The count must be exactly the joined text's, for every shipped encoding."""

from __future__ import annotations

import asyncio
import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.histories import generate
from core.context.compaction import CompactionConfig, Compactor, ScriptedSummarizer
from core.context.compaction.contract import assemble, assembled_parts
from core.context.view import View
from core.tokens import ENCODINGS, TokenCounter
from core.tokens.counter import MESSAGE_OVERHEAD, piece_boundary

# characters around which pre-tokenizers differ: newlines, spaces, tabs, punctuation and
# the "/" o200k's punctuation run takes after a newline, letters of both cases, digits,
# apostrophes (contractions), non-Latin letters and marks
ALPHABET = "ab Z9'/\n\r\t #]-.,:é語\u0301😀"
texts = st.text(alphabet=ALPHABET, max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, min_size=1, max_size=5), st.sampled_from(sorted(ENCODINGS)))
def test_count_joined_is_the_joined_texts_count(parts: list[str], encoding: str) -> None:
    counter = TokenCounter(encoding)
    text = "".join(parts)
    assert counter.count_joined(parts) == counter.count_uncached(text)
    assert counter.count_text(text) == counter.count_uncached(text)  # the memo it left


@settings(max_examples=300, deadline=None)
@given(texts, texts, texts, st.sampled_from(sorted(ENCODINGS)))
def test_counts_add_up_at_a_piece_boundary(a: str, b: str, c: str, encoding: str) -> None:
    """Built to hit the additive path: every join a boundary (``piece_boundary``)."""
    left, right = a.rstrip() + "x\n", "y" + b.lstrip("/") + "q\n"
    tail = "z" + c
    assert piece_boundary(left, right) and piece_boundary(right, tail)
    counter = TokenCounter(encoding)
    n = counter.count_joined([left, right, tail])
    assert n == counter.count_uncached(left + right + tail)
    assert n == sum(counter.count_uncached(p) for p in (left, right, tail))


def test_joins_that_are_not_piece_boundaries() -> None:
    assert not piece_boundary("a \n", "b")  # whitespace before the newline
    assert not piece_boundary("a\n", " b") and not piece_boundary("a\n", "\nb")
    assert not piece_boundary("a]\n", "/b")  # o200k: "]\n/" is one piece
    assert not piece_boundary("a", "b") and not piece_boundary("\n", "b")
    assert piece_boundary("a]\n", "## b")


def test_the_summary_block_is_counted_from_its_parts_and_exactly() -> None:
    """The user's path: a summary through the compactor. The block's tokens are those of
    its whole text encoded afresh; a second summary of the grown context reuses the body."""
    h = generate(random.Random(3).randint, steps=150, pending_end=False, realistic=True)
    view, records = h.view(), h.records()
    compactor = Compactor(CompactionConfig(), ScriptedSummarizer())
    out = asyncio.run(compactor.compact(view, "summary", records, dry_run=True))
    assert out.compacted and out.summary is not None and out.summary.content
    content = out.summary.content
    block = [i for i in out.items if i.kind == "summary"]
    assert len(block) == 1 and block[0].content == content
    exact = MESSAGE_OVERHEAD + TokenCounter().count_uncached(content)
    assert compactor.tokens(View(tuple(block), {})) == exact
    body = content.split("\n", 1)[1].rsplit("\n## Narrative\n", 1)[0] + "\n## Narrative"
    parts = assembled_parts(body, "the narrative", (1, 9))
    assert "".join(parts) == assemble(body, "the narrative", (1, 9))
    assert all(piece_boundary(a, b) for a, b in itertools.pairwise(parts))
