"""Dry run and apply on a stored trace (SPEC CMP-8): the UI's and the CLI's entry points.

``preview`` computes any level or layer on a trace's current context without writing:
before/after item lists, tokens saved, removed sequences and the retention report.
``apply_preview`` records a preview's outcome as a boundary (``persist.record_outcome``), after
checking that the head did not move while the summarizer ran. The write transaction is
opened only after the (possibly slow) summarizer has answered.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from core.context.compaction.compactor import Budget, Compactor
from core.context.compaction.config import CompactionConfig
from core.context.compaction.files import FileStateCache
from core.context.compaction.items import with_items
from core.context.compaction.outcome import CompactionOutcome
from core.context.compaction.persist import record_outcome
from core.context.compaction.retention import Retention, retention_report
from core.context.compaction.summarizer import ScriptedSummarizer, Summarizer
from core.context.compaction.summary_state import Records, load_records, main_path_messages
from core.context.view import current_view
from core.records import CompactionEvent
from core.store.store import Store


@dataclass(frozen=True)
class Preview:
    trace_id: str
    head: int | None
    outcome: CompactionOutcome
    retention: Retention
    records: Records
    event: CompactionEvent | None = None
    """The recorded boundary when the preview was applied."""

    @property
    def applied(self) -> bool:
        return self.event is not None

    def to_json(self) -> dict[str, Any]:
        """The ``ctxlens compact --json`` shape (key names are a contract)."""
        o = self.outcome
        return {
            "trace_id": self.trace_id,
            "level": o.level,
            "applied": self.applied,
            "status": o.status,
            "reason": o.reason,
            "limit_tokens": o.limit,
            "before": {"messages": len(o.before.items), "tokens": o.tokens_before},
            "after": {"messages": len(o.items), "tokens": o.tokens_after},
            "tokens_saved": o.tokens_saved,
            "removed": list(o.removed),
            "replaced": list(o.replaced),
            "layers": [layer.level for layer in o.layers],
            "context_after": o.after.openai(),
            "retention": self.retention.to_json(),
            "errors": list(o.errors),
            "compaction_id": self.event.id if self.event is not None else None,
        }


async def preview(
    store: Store,
    trace_id: str,
    level: str,
    config: CompactionConfig | None = None,
    summarizer: Summarizer | None = None,
) -> Preview:
    """``level`` on the trace's current context, without writing anything. ``auto`` uses the
    config's threshold; without a summarizer the scripted one writes the narrative."""
    config = config or CompactionConfig()
    with store.read() as r:
        tr = r.find_trace(trace_id)
        view = current_view(r, tr.id)
        msgs = main_path_messages(r, tr.id)
        records = load_records(r, tr.id, messages=msgs)
    files = FileStateCache.from_messages(msgs, config.files)
    compactor = Compactor(config, summarizer or ScriptedSummarizer(), files=files)
    budget = Budget(config.window, config.threshold)
    outcome = await compactor.compact(view, level, records, budget, dry_run=True)
    retention = retention_report(view, with_items(view, outcome.items), records)
    return Preview(tr.id, tr.head, outcome, retention, records)


def apply_preview(store: Store, pv: Preview) -> Preview:
    """Record exactly the outcome a preview showed (the UI's Apply: a model-written summary
    is not asked for again). Refused with ``ConflictError`` if the head moved since."""
    if not pv.outcome.compacted or pv.applied:
        return pv
    with store.write() as w:
        event = record_outcome(w, pv.trace_id, pv.outcome, pv.head, pv.records.goals.focus)
    return Preview(pv.trace_id, pv.head, pv.outcome, pv.retention, pv.records, event)


def dry_run(store: Store, trace_id: str, level: str, **kw: Any) -> Preview:
    """Synchronous ``preview`` (CLI, tests); inside an event loop await ``preview``."""
    return asyncio.run(preview(store, trace_id, level, **kw))


def apply_sync(store: Store, trace_id: str, level: str, **kw: Any) -> Preview:
    """``dry_run``, then record its outcome (``ctxlens compact --apply``)."""
    return apply_preview(store, dry_run(store, trace_id, level, **kw))
