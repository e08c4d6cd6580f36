"""Fuzzy matching for the command palette: subsequence match, scored.

A query matches a text when its characters appear in order; the score prefers matches at
word starts and runs of consecutive characters, and shorter texts.
"""

from __future__ import annotations

from collections.abc import Sequence


def fuzzy_score(query: str, text: str) -> float | None:
    """Score of ``query`` in ``text`` (higher is better), ``None`` when it does not match."""
    q = query.lower().replace(" ", "")
    if not q:
        return 0.0
    t = text.lower()
    score = 0.0
    pos = -1
    prev = -2
    for ch in q:
        pos = t.find(ch, pos + 1)
        if pos < 0:
            return None
        if pos == 0 or not t[pos - 1].isalnum():
            score += 3
        if pos == prev + 1:
            score += 2
        score += 1
        prev = pos
    return score - 0.01 * len(t)


def fuzzy_filter(query: str, texts: Sequence[str]) -> list[int]:
    """Indices of the matching texts, best first (ties keep their order)."""
    scored = [(s, i) for i, t in enumerate(texts) if (s := fuzzy_score(query, t)) is not None]
    scored.sort(key=lambda p: (-p[0], p[1]))
    return [i for _, i in scored]
