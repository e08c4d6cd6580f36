"""Where an agent's messages go: the trace's main path, or a side branch of its own (a
subagent). One strategy object answers the "main path or side branch?" questions the
phases ask — where to append, which head the view ends at, which duties only the main
path has — instead of a ``branch_type`` test at each place."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.context.compaction import CompactionOutcome, record_outcome
from core.records import CompactionEvent, NewMessage
from core.store import HEAD
from core.store.reader import Reader
from core.store.writer import Writer


@dataclass
class MainPath:
    """The trace's main path: appends follow the trace's head."""

    branch_type: str | None = None
    branch_id: str | None = None
    main_duties: bool = True
    """Periodic context (INJ-2), continuations (INJ-5), reflection after the task, old
    images to reference text (REF-3), the task list restored into a new turn, the PREPARE
    point recorded with each call, rewinds: things only the main path does."""

    def labels(self) -> dict[str, str | None]:
        """The branch fields every message (and call) of this lane carries."""
        return {"branch_type": self.branch_type, "branch_id": self.branch_id}

    def tag(self, nm: NewMessage, agent_name: str) -> NewMessage:
        """``nm`` as ``agent_name``'s message on this lane."""
        return replace(
            nm, agent_name=agent_name, branch_type=self.branch_type, branch_id=self.branch_id
        )

    def head(self, reader: Reader, trace_id: str) -> int | None:
        """The agent's last message as stored."""
        return reader.trace(trace_id).head

    def head_in(self, w: Writer, trace_id: str) -> int | None:
        """The agent's last message as of this transaction (appends not yet committed)."""
        return w.head(trace_id)

    def parent(self) -> Any:
        """The ``parent`` of the next append (``HEAD``: wherever the head is then)."""
        return HEAD

    def view_head(self) -> int | None:
        """The head the context cache reads to (``None``: the trace's)."""
        return None

    def fork_parent(self) -> int | None:
        """The parent of a new turn's initial messages (``None``: the trace's head)."""
        return None

    def moved(self, sequence: int) -> None:
        """The agent's last message is now ``sequence``."""

    def record_boundary(
        self,
        w: Writer,
        trace_id: str,
        outcome: CompactionOutcome,
        head: int | None,
        focus: str | None,
    ) -> CompactionEvent:
        """Write a compaction: on the main path the summary and its side branches too
        (``record_outcome``); a branch's own boundary (``boundary``) as it is."""
        event = self.boundary(trace_id, outcome)
        if event is not None:
            return w.record_compaction(event)
        return record_outcome(w, trace_id, outcome, expected_head=head, focus=focus)

    def boundary(self, trace_id: str, outcome: CompactionOutcome) -> CompactionEvent | None:
        """The boundary event this lane writes itself (``None``: the main path's route)."""
        return None


@dataclass
class SideBranch(MainPath):
    """A branch of its own (``subagent``), grown from ``tip`` without moving the head."""

    tip: int | None = None
    main_duties: bool = False

    def head(self, reader: Reader, trace_id: str) -> int | None:
        return self.tip

    def head_in(self, w: Writer, trace_id: str) -> int | None:
        return self.tip

    def parent(self) -> Any:
        return self.tip

    def view_head(self) -> int | None:
        return self.tip

    def fork_parent(self) -> int | None:
        return self.tip

    def moved(self, sequence: int) -> None:
        self.tip = sequence

    def boundary(self, trace_id: str, outcome: CompactionOutcome) -> CompactionEvent | None:
        """A boundary anchored at the branch's own last message."""
        return CompactionEvent.between(
            trace_id,
            outcome.applied_level,
            self.tip,
            outcome.before.items,
            outcome.items,
            (outcome.tokens_before, outcome.tokens_after),
            removed=outcome.removed,
            trigger=outcome.trigger,
            details={"layers": [layer.level for layer in outcome.layers]},
        )


def lane_for(branch_type: str | None, branch_id: str | None, fork_at: int | None) -> MainPath:
    return SideBranch(branch_type, branch_id, tip=fork_at) if branch_type else MainPath()
