"""What the compact dialog shows (UI-6, CMP-8): parameters, the diff, the retention report.

The dialog asks for a level or layer and its parameters, runs the dry run
(``core/context/compaction/preview.py:preview``, nothing written) and shows the context
before and after aligned row by row (removed rows struck out, replaced rows with their
placeholder, new rows such as a summary), the tokens saved, and the retention report with
every lost fact named. Apply records exactly the previewed outcome (``apply_preview``), so
a model-written summary is the one the user read.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.context.budget import DEFAULT_THRESHOLD, DEFAULT_WINDOW, Budget, budget_of
from core.context.compaction import (
    ALL_LEVELS,
    CompactionConfig,
    Preview,
    Retention,
    Summarizer,
    apply_preview,
    preview,
)
from core.context.compaction.config import GOAL_MODES as GOAL_MODES
from core.context.compaction.config import is_goal_mode
from core.context.compaction.items import kind_of, role_of, tokens_of, visible_text
from core.context.compaction.layers import level_help
from core.context.view import View
from core.errors import InvalidInputError
from core.inspector.timeline import preview_of, squash
from core.llm.settings import ModelConfigError, ModelSettings
from core.records import ContextItem, Message
from core.store.reader import Reader
from core.store.store import Store

#: Help of each level, written from the compaction defaults (the layer registry).
LEVEL_HELP = level_help()

RETENTION_FIELDS = (
    ("refs", "Refs"),
    ("constraints", "Constraints"),
    ("completed_steps", "Completed steps"),
    ("skills", "Skills"),
    ("task_goal", "Task goal"),
    ("pending", "Pending items"),
    ("failures", "Failures"),
)

DiffStatus = Literal["kept", "removed", "replaced", "added"]


@dataclass(frozen=True)
class CompactRequest:
    """The dialog's choices: a level or layer and the parameters it uses."""

    level: str = "auto"
    window: int = 128_000
    threshold: float = 0.5
    goal_mode: str = "on_overflow"
    window_source: str = "defaults"
    """Where ``window`` comes from: ``trace``, ``model-table``, ``config`` or ``defaults``
    (an import whose window is unknown gets the default, and this says so)."""
    threshold_source: str = "defaults"
    """``trace``, ``defaults`` or ``auto-compact point`` (the tool's own, recorded)."""
    not_in_transcript: int = 0
    """Prompt tokens of an import the transcript lacks (``core/inspector/recorded.py:
    CarriedGap``): the threshold is a prompt size, so the transcript may hold this less."""
    images_estimated: int = 0
    """Estimated prompt tokens of an import's current images (``core/tokens/image_tokens.py``):
    the compactor counts text only (images are image blocks, TOK-3), but the tool's threshold
    is measured on the whole prompt, images included, so the text may hold this less too."""

    @property
    def threshold_observed(self) -> bool:
        """The threshold is the tool's auto-compact point: the prompt size at which its
        compaction fired, so its own threshold is at or below it."""
        return self.threshold_source == "auto-compact point"

    @property
    def threshold_label(self) -> str:
        """Where the threshold comes from, as said beside it: ``defaults``, ``trace``, or
        ``auto-compact fired at this size; the tool's threshold is at or below it``."""
        if self.threshold_observed:
            return "auto-compact fired at this size; the tool's threshold is at or below it"
        return self.threshold_source

    @property
    def limits_text(self) -> str:
        """``window 200,000 (model table) · threshold 167,094 (auto-compact fired at this
        size; the tool's threshold is at or below it)``."""
        limit = int(self.window * self.threshold)
        where = self.window_source.replace("-", " ")
        text = f"window {self.window:,} ({where}) · threshold {limit:,} ({self.threshold_label})"
        parts = []
        if self.not_in_transcript > 0:
            parts.append(f"{self.not_in_transcript:,} are not in the transcript")
        if self.images_estimated > 0:
            parts.append(f"{self.images_estimated:,} are images (estimated)")
        return text + (f", of which {' and '.join(parts)}" if parts else "")

    @property
    def uncounted(self) -> int:
        """Prompt tokens the compactor does not count: what the transcript lacks and the
        images' estimate."""
        return max(self.not_in_transcript, 0) + max(self.images_estimated, 0)

    def transcript_config(self) -> CompactionConfig:
        """``config`` with the threshold lowered by ``uncounted``: the compactor counts the
        transcript's text, the threshold is measured on the whole prompt."""
        cfg = self.config()
        if self.uncounted <= 0:
            return cfg
        limit = self.window * self.threshold - self.uncounted
        return replace(cfg, threshold=max(limit, 1) / self.window)

    def config(self) -> CompactionConfig:
        if self.level not in ALL_LEVELS:
            raise InvalidInputError(f"unknown compaction level {self.level!r}")
        if self.window <= 0:
            raise InvalidInputError(f"window must be a positive number of tokens: {self.window}")
        if not 0 < self.threshold <= 1:
            raise InvalidInputError(f"threshold must be in (0, 1]: {self.threshold}")
        if not is_goal_mode(self.goal_mode):
            raise InvalidInputError(f"unknown goal mode {self.goal_mode!r}")
        return CompactionConfig(
            window=self.window, threshold=self.threshold, goal_mode=self.goal_mode
        )


def level_help_for(req: CompactRequest) -> str:
    """Help of ``req``'s level written from ``req``'s own window and threshold (what the
    dialog shows, not the defaults); a request the config refuses gets the defaults' help."""
    try:
        return level_help(req.config()).get(req.level, "")
    except InvalidInputError:
        return LEVEL_HELP.get(req.level, "")


def request_for(
    trace_metadata: Any, level: str = "auto", source: str = "ctxlens"
) -> CompactRequest:
    """Defaults from the trace: a run's recorded budget (window, threshold); an import's own
    window (``budget_of``: trace or model table) with the tool's recorded auto-compact point
    as the threshold; else the seeds'. ``window_source`` / ``threshold_source`` say which."""
    b = budget_of(source, trace_metadata)
    window = b.window or DEFAULT_WINDOW
    threshold, threshold_source = b.threshold_ratio or DEFAULT_THRESHOLD, _origin(b)
    if b.auto_compact and b.window and b.auto_compact <= b.window:
        threshold, threshold_source = b.auto_compact / b.window, "auto-compact point"
    return CompactRequest(
        level=level,
        window=window,
        threshold=threshold,
        window_source=(b.window_source if b.window else "defaults") if b.source == "imported"
        else _origin(b),
        threshold_source=threshold_source,
    )  # fmt: skip


def trace_request(
    reader: Reader, trace_id: str, level: str = "auto", window: int | None = None
) -> CompactRequest:
    """``request_for`` the stored trace, with what its transcript lacks (an import's
    ``carried_gap``). ``window``: the user's, which drops the tool's auto-compact point."""
    tr = reader.find_trace(trace_id)
    req = request_for(tr.metadata, level, tr.source)
    if window is not None:
        req = replace(req, window=window, window_source="option")
        if req.threshold_source == "auto-compact point":
            req = replace(req, threshold=DEFAULT_THRESHOLD, threshold_source="defaults")
    return with_transcript_gap(reader, trace_id, req)


def with_transcript_gap(reader: Reader, trace_id: str, req: CompactRequest) -> CompactRequest:
    """``req`` with ``not_in_transcript`` (its ``carried_gap``: prompt tokens the tool sent
    but did not log) and ``images_estimated`` (the current context's images) set for an
    import, so ``transcript_config`` lowers the threshold the same way for ``ctxlens
    compact`` and the Compact dialog."""
    from core.inspector.context_report import carried_gap, current_images

    tr = reader.find_trace(trace_id)
    if budget_of(tr.source, tr.metadata).source != "imported":
        return replace(req, not_in_transcript=0, images_estimated=0)
    gap = carried_gap(reader, tr.id)
    images = current_images(reader, tr.id, gap)
    return replace(
        req,
        not_in_transcript=max(gap.tokens, 0) if gap is not None else 0,
        images_estimated=images.estimated_tokens if images is not None else 0,
    )


def _origin(b: Budget) -> str:
    return "trace" if b.source == "trace" else "defaults"


# -- the side-by-side diff --------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DiffCell:
    sequence: int | None
    """``None`` for a synthetic item (a placeholder, a new summary, an identity block)."""
    role: str
    kind: str
    tokens: int
    text: str
    """One line: tool calls as ``name(args…)``, then the content as the model reads it."""


@dataclass(frozen=True, slots=True)
class DiffRow:
    status: DiffStatus
    before: DiffCell | None
    after: DiffCell | None


def _key(item: ContextItem) -> tuple[Any, ...]:
    if item.sequence is not None:
        return ("seq", item.sequence)
    return ("new", item.role, item.kind, item.content)


def diff_rows(before: View, after: View) -> list[DiffRow]:
    """Align two contexts row by row, in one pass.

    Items are matched by message sequence (synthetic items by role, kind and content).
    Every item of ``before`` appears exactly once on the left, in order, and every item
    of ``after`` once on the right: ``kept`` and ``replaced`` (same message, other
    content) pair them; ``removed`` has no right side; ``added`` has no left side. Within
    a run of changes the added rows come first, so a summary shows at the top of what it
    replaced.
    """
    b, a = before.items, after.items
    left = Counter(_key(x) for x in b)
    right = Counter(_key(x) for x in a)
    rows: list[DiffRow] = []
    gone: list[DiffRow] = []
    i = j = 0
    while i < len(b) or j < len(a):
        kb = _key(b[i]) if i < len(b) else None
        ka = _key(a[j]) if j < len(a) else None
        if kb is not None and kb == ka:
            rows += gone
            gone = []
            same = b[i].content == a[j].content and b[i].role == a[j].role
            status: DiffStatus = "kept" if same else "replaced"
            rows.append(DiffRow(status, _cell(b[i], before), _cell(a[j], after)))
            left[kb] -= 1
            right[kb] -= 1
            i += 1
            j += 1
        elif kb is not None and (right[kb] <= 0 or ka is None or left[ka] > 0):
            gone.append(DiffRow("removed", _cell(b[i], before), None))
            left[kb] -= 1
            i += 1
        else:
            assert ka is not None
            rows.append(DiffRow("added", None, _cell(a[j], after)))
            right[ka] -= 1
            j += 1
    return rows + gone


def _cell(item: ContextItem, view: View) -> DiffCell:
    msgs: Mapping[int, Message] = view.messages
    msg = msgs.get(item.sequence) if item.sequence is not None else None
    role, kind = role_of(item, msgs), kind_of(item, msgs)
    if msg is None:
        text = squash(item.content or "")
    else:
        shown = msg if item.content is None else replace(msg, content=item.content)
        text = preview_of(shown)
        if msg.role == "tool" and msg.name:
            text = f"{msg.name} → {text}"
    return DiffCell(item.sequence, role, kind, tokens_of(item, msgs), text)


# -- retention --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RetentionRow:
    field: str
    label: str
    fact: str
    kept: bool


def retention_rows(ret: Retention) -> list[RetentionRow]:
    """Every fact visible before the compaction: the lost ones first, then the kept ones,
    each group in field order."""
    lost: list[RetentionRow] = []
    kept: list[RetentionRow] = []
    for name, label in RETENTION_FIELDS:
        split = getattr(ret, name)
        lost += [RetentionRow(name, label, fact, False) for fact in split.lost]
        kept += [RetentionRow(name, label, fact, True) for fact in split.kept]
    return lost + kept


def retention_summary(ret: Retention, name_lost: bool = True) -> str:
    """E.g. ``Refs 5/6 kept (lost: grep-1) · Constraints 2/2 kept · …``."""
    parts = []
    for name, label in RETENTION_FIELDS:
        split = getattr(ret, name)
        total = len(split.kept) + len(split.lost)
        if not total:
            continue
        text = f"{label} {len(split.kept)}/{total} kept"
        if split.lost and name_lost:
            text += " (lost: " + ", ".join(_short(x) for x in split.lost[:3])
            text += ", …)" if len(split.lost) > 3 else ")"
        parts.append(text)
    return " · ".join(parts) or "No refs, constraints, steps or skills were visible."


def _short(text: str, limit: int = 40) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- running it -------------------------------------------------------------------------
@dataclass(frozen=True)
class CompactPreview:
    """Everything the dialog shows for one dry run (or, once applied, its record)."""

    request: CompactRequest
    preview: Preview
    rows: list[DiffRow]
    retention: list[RetentionRow]
    summarizer: str

    @property
    def can_apply(self) -> bool:
        return self.preview.outcome.compacted and not self.preview.applied

    def headline(self) -> str:
        o = self.preview.outcome
        before, after = len(o.before.items), len(o.items)
        if not o.compacted:
            text = f"{o.level}: {o.status.replace('_', ' ')} — {o.reason}"
            req = self.request
            if o.limit is not None and req.uncounted > 0:  # the threshold the line above names
                parts = []
                if req.not_in_transcript > 0:
                    parts.append(f"{req.not_in_transcript:,} not in the transcript")
                if req.images_estimated > 0:
                    parts.append(f"{req.images_estimated:,} in images (estimated)")
                text += (
                    f" (the {int(req.window * req.threshold):,}-token threshold less "
                    f"{' and '.join(parts)})"
                )
            return text
        share = o.tokens_saved / o.tokens_before if o.tokens_before else 0.0
        layers = ", ".join(layer.level for layer in o.layers)
        saved = (
            f"{o.tokens_saved:,} saved ({share:.0%})"
            if o.tokens_saved >= 0
            else f"{-o.tokens_saved:,} MORE tokens (the result is larger)"
        )
        return (
            f"{o.level}: {before} → {after} messages, {o.tokens_before:,} → "
            f"{o.tokens_after:,} tokens, {saved} · layers: {layers}"
        )

    def counts(self) -> dict[str, int]:
        return dict(Counter(r.status for r in self.rows))


def model_from_env(env: Mapping[str, str] | None = None) -> ModelSettings | None:
    """The configured model (``CTXLENS_BASE_URL`` + ``CTXLENS_MODEL``), or ``None``."""
    try:
        return ModelSettings.resolve(env=env)
    except ModelConfigError:
        return None


def summarizer_label(model: ModelSettings | None) -> str:
    if model is None:
        return "scripted summarizer (no model configured: set CTXLENS_BASE_URL and CTXLENS_MODEL)"
    return f"model {model.model} at {model.base_url}"


async def _preview(
    store: Store, trace_id: str, req: CompactRequest, model: ModelSettings | None
) -> Preview:
    config = req.transcript_config()
    if model is None or req.level not in ("summary", "auto"):
        return await preview(store, trace_id, req.level, config)
    from core.llm.client import ChatClient
    from core.llm.summarizer import ModelCompactionSummarizer

    async with ChatClient(model) as client:
        summarizer: Summarizer = ModelCompactionSummarizer(client)
        return await preview(store, trace_id, req.level, config, summarizer)


def run_preview(
    store: Store, trace_id: str, req: CompactRequest, model: ModelSettings | None = None
) -> CompactPreview:
    """The dry run with its diff and retention rows. Blocking: call it off the UI thread
    (it runs its own event loop for the summarizer). An import's threshold is lowered by
    what its transcript lacks (``with_transcript_gap``), as in ``ctxlens compact``."""
    with store.read() as r:
        req = with_transcript_gap(r, trace_id, req)
    pv = asyncio.run(_preview(store, trace_id, req, model))
    return build(req, pv, summarizer_label(model))


def build(req: CompactRequest, pv: Preview, summarizer: str) -> CompactPreview:
    rows = diff_rows(pv.outcome.before, pv.outcome.after)
    return CompactPreview(req, pv, rows, retention_rows(pv.retention), summarizer)


def commit(store: Store, cp: CompactPreview) -> CompactPreview:
    """Record the previewed outcome as a boundary (refused if the head moved since)."""
    if not cp.can_apply:
        raise InvalidInputError(f"nothing to apply: the preview was {cp.preview.outcome.status}")
    done = apply_preview(store, cp.preview)
    return replace(cp, preview=done)


def full_text(cp: CompactPreview, index: int, side: Literal["before", "after"]) -> str:
    """The whole content of one side of row ``index``, as the model reads it (for the
    dialog's detail view); empty when that side has no item."""
    row = cp.rows[index]
    if (row.before if side == "before" else row.after) is None:
        return ""
    o = cp.preview.outcome
    view = o.before if side == "before" else o.after
    position = sum(1 for r in cp.rows[:index] if (r.before if side == "before" else r.after))
    return visible_text(view.items[position], view.messages)
