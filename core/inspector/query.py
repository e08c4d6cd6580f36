"""Timeline search: a query string with field filters, run through ``Reader.search``.

``role:tool tool:read_file goal:1.2 kind:summary some text`` — each ``field:value`` is a
filter, the rest is text searched in message content. Hits are mapped to main-path rows;
hits on other branches are kept with ``row=None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InvalidInputError
from core.search.query import split_terms
from core.store.paths import Segment
from core.store.reader import Reader

FIELDS = {"role": "role", "tool": "tool_name", "goal": "goal_id", "kind": "kind"}


@dataclass(frozen=True)
class SearchQuery:
    text: str | None = None
    role: str | None = None
    tool_name: str | None = None
    goal_id: str | None = None
    kind: str | None = None

    @property
    def empty(self) -> bool:
        return not any((self.text, self.role, self.tool_name, self.goal_id, self.kind))


@dataclass(frozen=True, slots=True)
class Hit:
    sequence: int
    row: int | None


@dataclass(frozen=True)
class SearchResult:
    query: SearchQuery
    hits: tuple[Hit, ...]
    truncated: bool

    @property
    def on_path(self) -> list[Hit]:
        return [h for h in self.hits if h.row is not None]


def parse_query(text: str, **filters: str | None) -> SearchQuery:
    """Parse the search box; explicit ``filters`` (from combo boxes) win over the text."""
    words = split_terms(text)
    found: dict[str, str] = {}
    rest: list[str] = []
    for w in words:
        name, sep, value = w.partition(":")
        if sep and name in FIELDS and value:
            found[FIELDS[name]] = value
        else:
            rest.append(w)
    for key, given in filters.items():
        if key not in FIELDS.values():
            raise InvalidInputError(f"unknown search filter {key!r}")
        if given:
            found[key] = given
    return SearchQuery(text=" ".join(rest) or None, **found)


def run_search(
    reader: Reader, trace_id: str, query: SearchQuery, segments: list[Segment], limit: int = 5000
) -> SearchResult:
    seqs = reader.search(
        trace_id,
        text=query.text,
        role=query.role,
        tool_name=query.tool_name,
        kind=query.kind,
        goal_id=query.goal_id,
        limit=limit + 1,
    )
    truncated = len(seqs) > limit
    seqs = seqs[:limit]
    rows = reader.path_rows(trace_id, seqs, segments)
    return SearchResult(query, tuple(Hit(s, rows.get(s)) for s in seqs), truncated)
