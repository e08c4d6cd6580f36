"""The outcome of one compaction attempt: the context before and after, and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.context.compaction.config import LevelChoice, Trigger
from core.context.compaction.items import with_items
from core.context.compaction.result import LayerResult
from core.context.compaction.summary import SummaryResult
from core.context.view import View
from core.records import ContextItem

Status = Literal["compacted", "unchanged", "not_needed", "skipped", "refused", "failed"]


@dataclass(frozen=True)
class CompactionOutcome:
    status: Status
    """``compacted``: ``items`` is a new context to commit. Anything else: the context stays
    as it was (``items`` equals the input)."""
    reason: str
    level: LevelChoice
    """The level or layer asked for (``auto`` runs the layers in order)."""
    before: View
    items: Sequence[ContextItem]
    tokens_before: int
    tokens_after: int
    trigger: Trigger = "auto"
    layers: tuple[LayerResult, ...] = ()
    """The transforms that changed the context, in the order they ran."""
    summary: SummaryResult | None = None
    errors: tuple[str, ...] = ()
    limit: int | None = None
    """The tokens an ``auto`` compaction measured the context against (the threshold the
    compactor counts with), when it decided one was not needed; ``None`` otherwise."""

    @property
    def compacted(self) -> bool:
        return self.status == "compacted"

    @property
    def after(self) -> View:
        return with_items(self.before, self.items)

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def removed(self) -> tuple[int, ...]:
        kept = {i.sequence for i in self.items if i.sequence is not None}
        return tuple(
            i.sequence
            for i in self.before.items
            if i.sequence is not None and i.sequence not in kept
        )

    @property
    def replaced(self) -> tuple[int, ...]:
        """Sequences still in the context whose content the compaction replaced."""
        old = {i.sequence: i.content for i in self.before.items if i.sequence is not None}
        return tuple(
            i.sequence
            for i in self.items
            if i.sequence is not None and i.content is not None and old.get(i.sequence) != i.content
        )

    @property
    def applied_level(self) -> str:
        """The deepest layer that changed the context (the level recorded in the store):
        the identity block and file restores follow a compaction, they are not one."""
        changed = [r.level for r in self.layers if r.level != "file_restore"]
        real = [level for level in changed if level != "identity"]
        return (real or changed or [self.level])[-1]
