"""What a context transform returns: the new item list and a record of what it took out.

The sequences are immutable and read as tuples; a layer may hand over one that shares
structure with its previous output (``core/context/shared_tuples.py``) instead of a copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.records import ContextItem


@dataclass(frozen=True)
class LayerResult:
    level: str
    items: Sequence[ContextItem]
    removed: Sequence[int] = ()
    """Sequences that left the context."""
    replaced: Sequence[int] = ()
    """Sequences still in the context but shown with other content (placeholders, markers)."""
    details: dict[str, Any] | None = None

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.replaced or (self.details or {}).get("added"))


def unchanged(level: str, items: Sequence[ContextItem], why: str) -> LayerResult:
    return LayerResult(level, items, details={"skipped": why})
