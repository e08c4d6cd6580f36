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
from dataclasses import dataclass

from core.context.compaction.config import SummaryParams
from core.context.compaction.contract import contract_facts, contract_problems, render_summary
from core.context.compaction.facts import extract
from core.context.compaction.items import kind_of, role_of, total_tokens
from core.context.compaction.records import Records
from core.context.compaction.result import LayerResult
from core.context.compaction.summarizer import Summarizer, SummaryRequest
from core.context.compaction.units import last_unit
from core.context.view import View, render_item
from core.goals.views import detailed_view
from core.records import ContextItem
from core.tokens import count_text

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


def split(view: View) -> tuple[list[int], list[int], list[int]]:
    """Indexes kept before the summary, summarized, and kept after it (pending calls)."""
    items, msgs = view.items, view.messages
    last = last_unit(items, msgs)
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
    kept = set(head)
    region = [i for i in range(limit) if i not in kept]
    return head, region, tail


async def summarize(
    view: View, records: Records, params: SummaryParams, summarizer: Summarizer
) -> SummaryResult:
    items, msgs = view.items, view.messages
    head, region, tail = split(view)
    part = tuple(map(items.__getitem__, region))
    if not any(i.sequence is not None for i in part):
        return SummaryResult(None, error="nothing to summarize")
    stages: list[StageRecord] = []
    rendered = tuple([render_item(i, msgs) for i in part])
    tree = detailed_view(records.goals)
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
    seqs = [i.sequence for i in part if i.sequence is not None]
    expected = contract_facts(records, extract(part, msgs, done_calls=False), params.max_refs)
    content = render_summary(records, expected, narrative, (min(seqs), max(seqs)))
    problems = contract_problems(content, expected)
    if problems:
        return SummaryResult(None, tuple(stages), "contract: " + "; ".join(problems), content)
    block = ContextItem(None, content, "user", "summary")
    if total_tokens((block,), msgs) >= total_tokens(part, msgs):
        return SummaryResult(None, tuple(stages), "summary is not smaller than what it replaces")
    new = (*(items[i] for i in head), block, *(items[i] for i in tail))
    result = LayerResult(
        "summary",
        new,
        removed=tuple(seqs),
        details={"added": 1, "stages": [s.stage for s in stages]},
    )
    return SummaryResult(result, tuple(stages), None, content)


def _narrative_problem(narrative: str, params: SummaryParams) -> str | None:
    if not narrative.strip():
        return "empty summary"
    if looks_like_provider_error(narrative):
        return f"summary looks like provider error text: {narrative.strip()[:80]!r}"
    tokens = count_text(narrative)
    if tokens > params.max_narrative_tokens:
        return f"summary over budget: {tokens} > {params.max_narrative_tokens} tokens"
    return None
