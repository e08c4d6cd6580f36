"""The cross-trace query syntax (the GUI's search box and ``ctxlens search`` share it).

``render chart tool:read_file role:tool kind:summary goal:1.2 model:gpt-4o source:codex
after:2025-01-01 before:2025-02-01 has:compaction has:error cost>0.5 tokens>100000
trace:ab12`` — words are searched in message text and tool calls (whole words; ``rend*``
finds words that begin with ``rend``); ``field:value`` and
``cost>N`` / ``tokens>N`` (also ``<``) filter. Quoted values keep their spaces.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime

from core.errors import InvalidInputError

MESSAGE_FIELDS = {"role": "role", "tool": "tool", "kind": "kind", "goal": "goal"}
TRACE_FIELDS = {"model": "model", "source": "source", "trace": "trace"}
HAS = ("compaction", "error")
_COMPARE = re.compile(r"^(cost|tokens)(>=|<=|>|<)(.+)$")


@dataclass(frozen=True)
class Bound:
    field: str
    op: str
    value: float

    def holds(self, x: float | None) -> bool:
        if x is None:
            return False
        return {
            ">": x > self.value,
            ">=": x >= self.value,
            "<": x < self.value,
            "<=": x <= self.value,
        }[self.op]


@dataclass(frozen=True)
class Query:
    words: tuple[str, ...] = ()
    role: str | None = None
    tool: str | None = None
    kind: str | None = None
    goal: str | None = None
    model: str | None = None
    source: str | None = None
    trace: str | None = None
    after: float | None = None
    before: float | None = None
    has: frozenset[str] = frozenset()
    bounds: tuple[Bound, ...] = field(default=())

    @property
    def on_messages(self) -> bool:
        """Whether hits are messages (else the query only selects traces)."""
        return bool(self.words or self.role or self.tool or self.kind or self.goal)

    @property
    def empty(self) -> bool:
        return self == Query()


def split_terms(text: str) -> list[str]:
    """A search box's terms: quoted values keep their spaces; an unclosed quote is text."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def parse(text: str) -> Query:
    """Parse a query; a bad filter is an ``InvalidInputError`` naming it."""
    tokens = split_terms(text)
    found: dict[str, object] = {}
    words: list[str] = []
    has: set[str] = set()
    bounds: list[Bound] = []
    for token in tokens:
        cmp = _COMPARE.match(token)
        name, sep, value = token.partition(":")
        if cmp:
            bounds.append(Bound(cmp[1], cmp[2], _number(token, cmp[3])))
        elif sep and value and name in {**MESSAGE_FIELDS, **TRACE_FIELDS}:
            found[name] = value
        elif sep and value and name in ("after", "before"):
            found[name] = _date(token, value)
        elif sep and name == "has":
            if value not in HAS:
                raise InvalidInputError(f"{token!r}: has: takes {' or '.join(HAS)}")
            has.add(value)
        else:
            words.append(token)
    return Query(words=tuple(words), has=frozenset(has), bounds=tuple(bounds), **found)  # type: ignore[arg-type]


def _number(token: str, value: str) -> float:
    try:
        return float(value.replace(",", "").replace("_", "").lstrip("$"))
    except ValueError:
        raise InvalidInputError(f"{token!r}: {value!r} is not a number") from None


def _date(token: str, value: str) -> float:
    """Midnight UTC of a bare date (``after:`` includes that day, ``before:`` does not)."""
    try:
        day = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInputError(f"{token!r}: expected a date such as 2025-01-31") from None
    if day.tzinfo is None:
        day = day.replace(tzinfo=UTC)
    return day.timestamp()
