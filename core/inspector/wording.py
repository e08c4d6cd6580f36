"""Small wording helpers shared by the panes' texts: a count with its noun in the right
number ("1 item", "2 items"), and a signed token change that never reads "−0"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """``1 item``, ``0 items``, ``2,048 items`` (``plural``: an irregular plural)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def moved(n: int, verb: str, tokens: int, sign: str) -> str:
    """How many items a diff moved and their tokens: ``2 left (−130 tok)``; ``0 left``
    without a signed zero. ``sign``: ``+`` or ``−``."""
    return f"{n:,} {verb}" + (f" ({sign}{tokens:,} tok)" if n else "")


def article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (by its first letter: ``an imported``, ``a goal``)."""
    return "an" if word[:1].lower() in "aeiou" else "a"
