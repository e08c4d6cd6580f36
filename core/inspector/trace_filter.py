"""What the Traces pane's filter bar keeps: text, model, date range, cost and tokens at least.

Judged on the rows the pane already holds (``core/inspector/trace_list.py:TraceSummary``), so
changing a filter never reads the store. The figures are the ones the pane shows: the start
of the trace, its transcript tokens, the cost of its priced calls (a trace with no priced
call has no cost and fails a cost filter: "no price" is not $0).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from core.inspector.trace_list import TraceSummary


@dataclass(frozen=True)
class ListFilter:
    text: str = ""
    """Words that must all occur in the title, id, model or source (any case)."""
    model: str | None = None
    """Exactly this model (the row's model, as the Model column shows it)."""
    span: tuple[float | None, float | None] = (None, None)
    """Started at or after the first, before the second (epoch seconds; ``None``: open)."""
    min_usd: float | None = None
    """Its priced calls cost at least this (USD)."""
    min_tokens: int | None = None
    """At least this many transcript tokens."""

    @property
    def after(self) -> float | None:
        return self.span[0]

    @property
    def before(self) -> float | None:
        return self.span[1]

    @property
    def facets(self) -> int:
        """How many filters besides the text are set (each end of the span counts)."""
        values = (self.model, *self.span, self.min_usd, self.min_tokens)
        return sum(v is not None for v in values)

    @property
    def active(self) -> bool:
        return bool(self.text.strip()) or self.facets > 0

    def matches(self, row: TraceSummary) -> bool:
        return (
            self._text_ok(row)
            and (self.model is None or row.model == self.model)
            and (self.after is None or row.start >= self.after)
            and (self.before is None or row.start < self.before)
            and (self.min_usd is None or (row.usd is not None and row.usd >= self.min_usd))
            and (self.min_tokens is None or row.tokens >= self.min_tokens)
        )

    def _text_ok(self, row: TraceSummary) -> bool:
        words = self.text.lower().split()
        if not words:
            return True
        tr = row.trace
        hay = " ".join((tr.title or "", tr.id, row.model or "", tr.source)).lower()
        return all(w in hay for w in words)

    def cleared(self) -> ListFilter:
        """The same text, no other filter."""
        return ListFilter(self.text)

    def to_text(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_text(cls, text: Any) -> ListFilter:
        """A remembered filter; anything unreadable is no filter (settings are user files)."""
        try:
            data = json.loads(str(text)) if text else {}
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        kinds = {"text": str, "model": str, "min_usd": float, "min_tokens": int}
        kept = {k: _as(kinds[k], v) for k, v in data.items() if k in kinds}
        span = data.get("span")
        if isinstance(span, list) and len(span) == 2:
            kept["span"] = (_as(float, span[0]), _as(float, span[1]))
        return cls(**{k: v for k, v in kept.items() if v is not None})


def _as(kind: type, value: Any) -> Any:
    if kind is str:
        return value if isinstance(value, str) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return kind(value)


def models_of(rows: list[TraceSummary]) -> list[str]:
    """The distinct models of the rows, for the model choice."""
    return sorted({r.model for r in rows if r.model})
