"""Branches of a trace seen from its main path: side branches and abandoned continuations.

The store keeps every message (STORE-4); after a rewind the old continuation is a line
that forks off the main path and is no longer on it. The timeline marks the fork points
and lists the branches so a user can open one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.store.paths import LineInfo, Segment, on_path

if TYPE_CHECKING:  # a Reader or the first page's sqlite3 reader (no SQLAlchemy)
    from core.store.path_reads import EitherReader


@dataclass(frozen=True, slots=True)
class Branch:
    """A line that forks off another line."""

    line: int
    kind: str
    """``abandoned`` (left behind by a rewind) or the side-branch type."""
    fork_sequence: int
    """The message it forks from."""
    tip_sequence: int
    length: int
    branch_id: str | None
    on_main_path: bool
    summary_sequence: int | None = None
    """A compaction's model call: the summary it wrote (the compaction event links them)."""

    @property
    def label(self) -> str:
        """E.g. ``compaction's model call branch from #354: 4 messages (tip #547), wrote
        the summary #356``."""
        text = (
            f"{branch_label(self.kind)} branch from #{self.fork_sequence}: "
            f"{self.length} messages (tip #{self.tip_sequence})"
        )
        if self.summary_sequence is not None:
            text += f", wrote the summary #{self.summary_sequence}"
        return text


#: A branch type as the window names it.
BRANCH_LABELS = {
    "compression": "compaction's model call",
    "knowledge_eval": "knowledge check",
    "reflection": "reflection",
    "subagent": "subagent",
    "abandoned": "abandoned",
}


def branch_label(kind: str) -> str:
    return BRANCH_LABELS.get(kind, kind.replace("_", " "))


def branches(
    reader: EitherReader, trace_id: str, segments: list[Segment] | None = None
) -> list[Branch]:
    """Every forking line, with whether its tip lies on the main path."""
    segs = segments if segments is not None else reader.segments(trace_id)
    lines = reader.lines(trace_id)
    summaries = summaries_by_branch(reader, trace_id)
    out: list[Branch] = []
    for line, parent in sorted(reader.fork_parents(trace_id).items()):
        li = lines[line]
        live = on_path(segs, li.line, li.tip_depth)
        kind = li.branch_type or ("main" if live else "abandoned")
        if kind == "main":
            continue
        length = li.tip_depth - li.start_depth + 1
        summary = summaries.get(li.branch_id or "") if kind == "compression" else None
        out.append(Branch(line, kind, parent, li.tip_sequence, length, li.branch_id, live, summary))
    out.extend(_abandoned_tails(reader, trace_id, segs, lines))
    return out


def summaries_by_branch(reader: EitherReader, trace_id: str) -> dict[str, int]:
    """Compaction-call branch id -> the summary it wrote, from the compaction events that
    name their summarizer (``details.summarizer.branch_id``: an imported Claude Code
    ``agent-acompact-*`` transcript)."""
    out: dict[str, int] = {}
    for ev in reader.compactions(trace_id):
        run = ev.details.get("summarizer") if isinstance(ev.details, dict) else None
        if isinstance(run, dict) and ev.summary_sequence is not None:
            out[str(run.get("branch_id"))] = ev.summary_sequence
    return out


def _abandoned_tails(
    reader: EitherReader, trace_id: str, segs: list[Segment], lines: dict[int, LineInfo]
) -> list[Branch]:
    """A rewind leaves the old continuation on the same line, past the path's end on it."""
    out = []
    for s in segs:
        li = lines[s.line]
        if li.tip_depth > s.last and li.branch_type is None:
            fork = reader.main_path_page(trace_id, s.last, 1, segments=segs)[0].sequence
            length = li.tip_depth - s.last
            out.append(Branch(s.line, "abandoned", fork, li.tip_sequence, length, None, False))
    return out


def fork_badges(found: list[Branch]) -> dict[int, tuple[str, ...]]:
    """Fork message sequence -> kinds of the branches starting there."""
    out: dict[int, tuple[str, ...]] = {}
    for b in found:
        out[b.fork_sequence] = (*out.get(b.fork_sequence, ()), b.kind)
    return out
