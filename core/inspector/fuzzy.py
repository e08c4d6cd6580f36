"""Fuzzy matching for the command palette, ranked the way VS Code's and fzf's pickers do.

A query matches a text when its characters appear in the text in order. Matches are
ranked in tiers, so a scattered match never outranks a real one ("comp" puts "Run:
Compact…" and "Run: Compare traces…" before "View: Command palette…", where c-o-m-p
only appears spread over two words):

- ``PREFIX``: the text, or its name after a ``Category: `` prefix, starts with the query;
- ``WORD_START``: each word of the query starts a word of the text, in order ("comp",
  "run comp", "dark th");
- ``SUBSTRING``: the query is one run of characters inside the text;
- ``SCATTERED``: only a subsequence.

Within a tier the best alignment of the query's characters decides (``alignment``: fzf's
idea — a point per character, a bonus at a word start and for each consecutive
character, a penalty for each gap), then the shorter text, then the given order.
"""

from __future__ import annotations

from collections.abc import Sequence

SCATTERED, SUBSTRING, WORD_START, PREFIX = range(4)
TIER = 10_000.0
"""Score of one tier: more than any alignment of a query a person types."""
MATCH = 16
BONUS_WORD_START = 8
BONUS_CONSECUTIVE = 8
GAP_START = 3
GAP_EXTEND = 1
_NONE = float("-inf")


def word_starts(text: str) -> list[bool]:
    """Where a word starts: the first character, one after a separator, a capital after
    a lower-case letter (camelCase), a digit after a letter and a letter after a digit."""
    out = []
    for i, ch in enumerate(text):
        if not ch.isalnum():
            out.append(False)
            continue
        before = text[i - 1] if i else ""
        out.append(
            not before.isalnum()
            or (ch.isupper() and before.islower())
            or (ch.isdigit() != before.isdigit())
        )
    return out


def alignment(query: str, text: str, starts: Sequence[bool] | None = None) -> float | None:
    """The best score of ``query``'s characters (lower case, no spaces) placed in order in
    ``text`` (lower case), ``None`` when they are not a subsequence of it. ``starts``:
    ``word_starts`` of the original text."""
    if not query:
        return 0.0
    starts = starts if starts is not None else word_starts(text)
    n = len(text)
    prev: list[float] = []
    for i, ch in enumerate(query):
        cur = [_NONE] * n
        gap = _NONE  # best prev[k] minus the gap's penalty, over k <= j - 2
        for j in range(n):
            if i and j >= 2:
                gap = max(gap - GAP_EXTEND, prev[j - 2] - GAP_START)
            if text[j] != ch:
                continue
            bonus = BONUS_WORD_START if starts[j] else 0
            if not i:
                cur[j] = MATCH + 2 * bonus  # the first character counts its start twice
                continue
            best = max(prev[j - 1] + BONUS_CONSECUTIVE if j else _NONE, gap)
            if best > _NONE:
                cur[j] = best + MATCH + bonus
        prev = cur
    best = max(prev, default=_NONE)
    return best if best > _NONE else None


def match_tier(query: str, text: str, starts: Sequence[bool] | None = None) -> int | None:
    """``PREFIX``, ``WORD_START``, ``SUBSTRING``, ``SCATTERED``, or ``None`` (no match)."""
    words = query.lower().split()
    t = text.lower()
    q = " ".join(words)
    if not q:
        return PREFIX
    name = t.partition(": ")[2]
    if t.startswith(q) or (name and name.startswith(q)):
        return PREFIX
    starts = starts if starts is not None else word_starts(text)
    if _words_start(words, t, starts):
        return WORD_START
    if q in t:
        return SUBSTRING
    return SCATTERED if alignment("".join(words), t, starts) is not None else None


def _words_start(words: list[str], text: str, starts: Sequence[bool]) -> bool:
    """Each of ``words`` begins a word of ``text``, in order (earliest places first)."""
    pos = 0
    for w in words:
        at = next((p for p in range(pos, len(text)) if starts[p] and text.startswith(w, p)), None)
        if at is None:
            return False
        pos = at + len(w)
    return True


def fuzzy_score(query: str, text: str) -> float | None:
    """Score of ``query`` in ``text`` (higher is better), ``None`` when it does not match:
    the tier times ``TIER``, plus the alignment, less a hundredth per character."""
    q = "".join(query.lower().split())
    if not q:
        return 0.0
    starts = word_starts(text)
    score = alignment(q, text.lower(), starts)
    if score is None:
        return None
    tier = match_tier(query, text, starts)
    assert tier is not None
    return tier * TIER + score - 0.01 * len(text)


def fuzzy_filter(query: str, texts: Sequence[str]) -> list[int]:
    """Indices of the matching texts, best first (ties keep their order)."""
    scored = [(s, i) for i, t in enumerate(texts) if (s := fuzzy_score(query, t)) is not None]
    scored.sort(key=lambda p: (-p[0], p[1]))
    return [i for _, i in scored]
