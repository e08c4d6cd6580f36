"""Knowledge awaiting evaluation (seed A, CMP-4): what ``reflection`` side branches
extracted since the last ``knowledge_eval`` branch judged it. A summary compaction that
finds some runs the queue ``[knowledge_eval, compression]`` over it."""

from __future__ import annotations

from sqlalchemy import select

from core.store import schema as t
from core.store.reader import Reader

_BRANCHES = ("reflection", "knowledge_eval")


def pending_knowledge(reader: Reader, trace_id: str) -> tuple[str, ...]:
    """Answers of ``reflection`` branches written after the newest ``knowledge_eval``
    answer, oldest first: the knowledge no evaluation has judged yet."""
    m = t.messages.c
    rows = reader.conn.execute(
        select(m.branch_type, m.content)
        .where(m.trace_id == trace_id, m.role == "assistant", m.branch_type.in_(_BRANCHES))
        .order_by(m.sequence)
    ).all()
    pending: list[str] = []
    for branch_type, content in rows:
        if branch_type == "knowledge_eval":
            pending = []
        elif content:
            pending.append(str(content))
    return tuple(pending)
