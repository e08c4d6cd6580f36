"""The LLM summary (SPEC CMP-4/5, seed A Level 2) as a context transform.

The context becomes: the leading system messages, the first user message, one summary, and
the last unit if its tool calls are still pending (results will follow it). The summarizer
runs once per stage of the side-branch queue; the ``compression`` answer is the narrative.
A narrative that is empty, looks like provider error text or exceeds its budget, a summary
that misses a contract field, or one no smaller than what it replaces is rejected: the
result then carries the reason and no items, and the context stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.context.compaction.config import SummaryParams
from core.context.compaction.contract import (
    ContractFacts,
    assembled_parts,
    contract_facts,
    contract_problems,
    goal_tree_text,
    summary_body,
)
from core.context.compaction.facts import FactFold, Facts
from core.context.compaction.items import kind_of, role_of, total_tokens
from core.context.compaction.result import LayerResult
from core.context.compaction.scan import ContextState, Scan, scan_of
from core.context.compaction.summarizer import Summarizer, SummaryRequest
from core.context.compaction.summary_state import Records
from core.context.shared_tuples import ListPrefix
from core.context.view import View, render_resolved
from core.records import ContextItem, Message
from core.tokens import count_text, default_counter
from core.tokens.counter import MESSAGE_OVERHEAD

_ERROR_START = re.compile(
    r"^\s*(?:error\b|\{\s*\"error\"|<html|<!doctype|http/\d|status(?: code)?\s*[45]\d\d)",
    re.IGNORECASE,
)
_ERROR_PHRASE = re.compile(
    r"rate.?limit|too many requests|overloaded|internal server error|bad gateway|"
    r"service unavailable|gateway time-?out|context[_ ]length[_ ]exceeded|"
    r"maximum context length|invalid_request_error|upstream connect error|insufficient_quota",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class StageRecord:
    """One side branch of the queue: what was asked and what came back."""

    stage: str
    request: SummaryRequest
    output: str


@dataclass(frozen=True)
class SummaryResult:
    result: LayerResult | None
    """The new context, or ``None`` when the summary was rejected."""
    stages: tuple[StageRecord, ...] = ()
    error: str | None = None
    content: str | None = None


def summary_queue(stages: tuple[str, ...], knowledge: tuple[str, ...]) -> tuple[str, ...]:
    """The side-branch queue of one summary: the configured stages, with
    ``knowledge_eval`` before ``compression`` while knowledge awaits evaluation (seed A:
    ``["knowledge_eval", "compression"]``)."""
    if not knowledge or "knowledge_eval" in stages:
        return stages
    at = stages.index("compression") if "compression" in stages else len(stages)
    return (*stages[:at], "knowledge_eval", *stages[at:])


def looks_like_provider_error(text: str) -> bool:
    """Heuristic: error-shaped openings anywhere, error phrases only in short texts."""
    return bool(_ERROR_START.match(text)) or (len(text) < 400 and bool(_ERROR_PHRASE.search(text)))


def split(view: View, state: ContextState | None = None) -> tuple[list[int], list[int], list[int]]:
    """Indexes kept before the summary, summarized, and kept after it (pending calls)."""
    scan = scan_of(view, state)
    head, tail = _ends(scan)
    limit = tail[0] if tail else len(view.items)
    kept = set(head)
    return head, [i for i in range(limit) if i not in kept], tail


def _ends(scan: Scan) -> tuple[list[int], list[int]]:
    """The leading system messages and the first user message, and the pending tail."""
    items, msgs = scan.items, scan.messages
    last = scan.units[-1] if scan.units else None
    tail = list(range(last.start, last.end)) if last is not None and last.pending else []
    head: list[int] = []
    first_user = False
    limit = tail[0] if tail else len(items)
    for i in range(limit):
        if first_user and len(head) < i:
            break  # past the leading system messages, and the first user message found
        role, kind = role_of(items[i], msgs), kind_of(items[i], msgs)
        if role == "system" and kind != "identity" and len(head) == i:
            head.append(i)
        elif (
            not first_user
            and role == "user"
            and kind == "message"
            and items[i].sequence is not None
        ):
            head.append(i)
            first_user = True
    return head, tail


class _Region:
    """The summarized part so far (``items[:hi]`` without the head): its messages as the
    summarizer reads them, its facts, its first and last sequence. ``rendered`` and
    ``stored`` are only appended to (a region that would shrink is replaced by a new one),
    so a ``ListPrefix`` of them is immutable and a request or result holds one."""

    def __init__(self, head: tuple[int, ...]) -> None:
        self.head = head
        self.hi = 0
        self.rendered: list[dict[str, Any]] = []
        self.facts = FactFold(done_calls=False)
        self.seqs: list[int] = []
        """Smallest and largest sequence (empty until one is seen)."""
        self.stored: list[int] = []
        """Sequences of the stored messages in the region, in order."""
        self.size = 0

    def extend_to(self, scan: Scan, hi: int) -> None:
        """Fold ``items[self.hi:hi]`` in, skipping the head, one run at a time."""
        lo = self.hi
        for h in (*(h for h in self.head if lo <= h < hi), hi):
            if lo < h:
                self._add(scan, lo, h)
            lo = h + 1
        self.hi = max(self.hi, hi)

    def _add(self, scan: Scan, lo: int, hi: int) -> None:
        items, msgs = scan.items, scan.messages
        resolved = scan.msgs
        self.rendered += [render_resolved(items[i], resolved[i]) for i in range(lo, hi)]
        self.facts.add(items, msgs, lo, hi, scan.msgs)
        stored = [s for s in scan.seqs[lo:hi] if s is not None]
        if stored:
            self.stored += stored
            low, high = min(stored), max(stored)
            self.seqs = (
                [min(low, self.seqs[0]), max(high, self.seqs[1])] if self.seqs else [low, high]
            )
        self.size += hi - lo


class _Body(NamedTuple):
    """The summary body written for some records and region facts, and whether it alone
    carries every section and expected fact (then so does every summary around it)."""

    records: Records
    region: Facts
    max_refs: int
    expected: ContractFacts
    text: str
    complete: bool


class _SummaryFold:
    def __init__(self) -> None:
        self.done = 0
        self.region: _Region | None = None
        self.body: _Body | None = None

    def body_for(self, records: Records, region: Facts, max_refs: int) -> _Body:
        """The body for these records and facts: written and checked again only when they
        changed (between a run's steps they mostly do not)."""
        b = self.body
        if (
            b is None
            or b.max_refs != max_refs
            or not (b.records is records or b.records == records)
            or b.region != region
        ):
            expected = contract_facts(records, region, max_refs)
            text = summary_body(records, expected)
            problems = contract_problems(text, expected)
            complete = all(p.startswith("resume:") for p in problems)  # resume: assemble's
            b = self.body = _Body(records, region, max_refs, expected, text, complete)
        return b

    def extend(self, scan: Scan) -> None:
        pass

    def region_to(self, scan: Scan, head: tuple[int, ...], hi: int) -> _Region:
        region = self.region
        if region is None or region.head != head or region.hi > hi:
            region = self.region = _Region(head)
        region.extend_to(scan, hi)
        return region


async def summarize(
    view: View,
    records: Records,
    params: SummaryParams,
    summarizer: Summarizer,
    state: ContextState | None = None,
) -> SummaryResult:
    items, msgs = view.items, view.messages
    scan = scan_of(view, state)
    head, tail = _ends(scan)
    limit = tail[0] if tail else len(items)
    fold = scan.fold("summary", _SummaryFold)
    region = fold.region_to(scan, tuple(head), limit)
    if not region.seqs:
        return SummaryResult(None, error="nothing to summarize")
    stages: list[StageRecord] = []
    rendered = ListPrefix(region.rendered)  # append-only: the request reads it, no copy
    tree = goal_tree_text(records.goals)
    for stage in summary_queue(params.stages, records.knowledge):
        notes = tuple(s.output for s in stages)
        if stage == "knowledge_eval":
            notes = (*records.knowledge, *notes)
        req = SummaryRequest(stage, rendered, tree, params.max_narrative_tokens, notes)
        try:
            out = await summarizer.summarize(req)
        except Exception as exc:  # any summarizer failure is a failed compaction, never a crash
            return SummaryResult(None, tuple(stages), f"{stage}: summarizer raised {exc!r}"[:300])
        stages.append(StageRecord(stage, req, out if isinstance(out, str) else str(out)))
    narrative = stages[-1].output if stages else ""
    error = _narrative_problem(narrative, params)
    if error:
        return SummaryResult(None, tuple(stages), error)
    body = fold.body_for(records, region.facts.facts(), params.max_refs)
    parts = assembled_parts(body.text, narrative, (region.seqs[0], region.seqs[1]))
    content = "".join(parts)
    default_counter().count_joined(parts)  # the body's count is a memo hit: only the rest
    problems = [] if body.complete else contract_problems(content, body.expected)
    if problems:
        return SummaryResult(None, tuple(stages), "contract: " + "; ".join(problems), content)
    block = ContextItem(None, content, "user", "summary")
    part_tokens = scan.tokens_in(0, limit) - sum(scan.tokens_in(i, i + 1) for i in head)
    if not _smaller(block, part_tokens, msgs):
        return SummaryResult(None, tuple(stages), "summary is not smaller than what it replaces")
    seqs = ListPrefix(region.stored)
    new = (*(items[i] for i in head), block, *(items[i] for i in tail))
    result = LayerResult(
        "summary", new, removed=seqs, details={"added": 1, "stages": [s.stage for s in stages]}
    )
    return SummaryResult(result, tuple(stages), None, content)


def _smaller(block: ContextItem, tokens: int, msgs: Mapping[int, Message]) -> bool:
    """The block has fewer tokens than ``tokens``. A BPE token is at least one byte, so a
    block with fewer bytes (plus the message overhead) is smaller without counting it."""
    if MESSAGE_OVERHEAD + len((block.content or "").encode("utf-8")) < tokens:
        return True
    return total_tokens((block,), msgs) < tokens


def _narrative_problem(narrative: str, params: SummaryParams) -> str | None:
    if not narrative.strip():
        return "empty summary"
    if looks_like_provider_error(narrative):
        return f"summary looks like provider error text: {narrative.strip()[:80]!r}"
    tokens = count_text(narrative)
    if tokens > params.max_narrative_tokens:
        return f"summary over budget: {tokens} > {params.max_narrative_tokens} tokens"
    return None
