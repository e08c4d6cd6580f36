"""A record's JSON text cut from its own line's bytes, instead of encoded again.

Importers keep many records as they are (Claude Code's progress and hook records are 1.1
of the 1.5 MB of metadata a 2.9 MB session stores). Parsing a line and encoding the dict
again costs a dict copy and an ``orjson.dumps`` per record; the line already holds that
text. What is stored is the same JSON value; only the bytes may differ where the source
wrote a value in another of JSON's spellings (an escaped character, a float's digits).
"""

from __future__ import annotations

from typing import Any

import orjson


class LeadingKeys:
    """Cuts records' JSON text from their lines without the keys in ``drop`` that lead
    them (Claude Code writes its session keys first in every record). All per record work
    is in C: a record's layout (its keys in order) is looked up, the rest is byte search."""

    LAYOUTS = 1024
    """Most record layouts remembered (a format has a few dozen)."""

    def __init__(self, drop: frozenset[str]) -> None:
        self.drop = drop
        self._plans: dict[tuple[str, ...], bytes | None] = {}

    def cut(self, record: dict[str, Any], line: bytes) -> bytes | None:
        """The JSON text of ``record`` without the keys in ``drop``, cut from ``line``, or
        ``None`` when that cannot be done exactly (the caller encodes the record instead).

        ``line`` must be exactly ``record``'s JSON text (``reading.parse_line_exact``), so
        its keys come in the record's order. The keys to drop must all come first; the cut
        is then at the first ``,"<first kept key>":``. That text cannot be inside a string
        (its quote is not escaped), and a key (the guard: ``_AFTER_STRING``) cannot start
        right after a string's end; one nested in a value is after an opening brace or
        bracket, so a ``{`` or ``[`` before the cut gives ``None``, as does a key written
        with spaces around it or a key to drop further on.
        """
        layout = tuple(record)
        plan = self._plans.get(layout, b"")
        if plan == b"":
            plan = self._plan(layout)
        body = line.rstrip()
        if plan is None or body[:1] != b"{":
            return None
        if plan == b"{":  # nothing to drop
            return body
        if plan == b"}":  # nothing kept
            return b"{}"
        at = body.find(plan)
        if at < 0 or body.find(b"{", 1, at) >= 0 or body.find(b"[", 1, at) >= 0:
            return None
        return b"{" + body[at + 1 :]

    def _plan(self, layout: tuple[str, ...]) -> bytes | None:
        """How to cut a record with these keys: ``b"{"`` keep all, ``b"}"`` keep none,
        ``b',"<first kept key>":'`` cut there, ``None`` not at all."""
        n = 0
        while n < len(layout) and layout[n] in self.drop:
            n += 1
        plan: bytes | None
        if not self.drop.isdisjoint(layout[n:]):
            plan = None
        elif n == 0:
            plan = b"{"
        elif n == len(layout):
            plan = b"}"
        elif layout[n][:1] in _AFTER_STRING or not layout[n]:
            plan = None
        else:
            plan = b"," + orjson.dumps(layout[n]) + b":"
        if len(self._plans) < self.LAYOUTS:
            self._plans[layout] = plan
        return plan


#: What may follow a string's closing quote in JSON: a key starting with one of these
#: could match ``,"<key>":`` across a string's end, so such a record is not cut.
_AFTER_STRING = frozenset(' \t\n\r,:}]"\\')


def without_leading_keys(record: dict[str, Any], line: bytes, drop: frozenset[str]) -> bytes | None:
    """``LeadingKeys(drop).cut(record, line)``, for one record."""
    return LeadingKeys(drop).cut(record, line)
