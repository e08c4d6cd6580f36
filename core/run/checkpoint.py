"""The context package a run checkpoints (SPEC STORE-5, seed C "上下文包").

Written at each compaction and at the end of each turn as an immutable blob: it answers
what the task is, what is done, what is left, where the evidence is, what the budget used —
enough for a new process to continue without redoing work. Every ``round_checkpoints``
rounds a smaller ``round`` package is written too: the runtime state and where the run
stood (head, next call index, newest compaction), without the task state the store already
holds — cheap enough to write after every round, so a killed run loses at most one round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from core.agents import RUNTIME_MAIN
from core.context.compaction import load_records
from core.context.view import token_breakdown
from core.refs import image_blocks_in
from core.run.agent_view import agent_view
from core.store import schema as t
from core.store.reader import Reader

if TYPE_CHECKING:
    from core.run.base import RunnerCore as Runner

PACKAGE_VERSION = 2
"""2: ``callIndex``, ``compactionId``, ``phase`` and the full ``runtime`` state added."""


def context_package(
    reader: Reader, trace_id: str, runner: Runner, *, done: bool = False
) -> dict[str, Any]:
    trace = reader.trace(trace_id)
    view = agent_view(reader, trace_id, None, RUNTIME_MAIN)
    used, by = token_breakdown(view)
    records = load_records(reader, trace_id)
    refs = reader.refs(trace_id)
    on_path = set(reader.main_path_sequences(trace_id))
    evidence = [
        {"ref": r.id, "kind": r.kind, "description": r.description}
        for r in refs
        if r.source_sequence in on_path
    ]
    return {
        **_position(reader, trace_id, trace.head, runner, done),
        "runId": trace_id,
        "contextBudget": {
            "maxTokens": runner.config.window,
            "usedTokens": used,
            "byComponent": by,
            "imageBlocks": image_blocks_in(view),
        },
        "taskState": {
            "goal": records.task_goal(),
            "completedSteps": list(records.completed_steps()),
            "pendingSteps": list(records.pending_items()),
        },
        "evidenceRefs": evidence,
        "goalTree": [
            {
                "id": g.id,
                "title": g.title,
                "parent": g.parent,
                "status": g.status,
                "summary": g.summary,
            }
            for g in runner.goals.goals
        ],
        "focus": runner.goals.focus,
        "injectedSkills": [
            {"skill": s.skill, "message_sequence": s.message_sequence, "reason": s.reason}
            for s in reader.skill_injections(trace_id)
        ],
        "runtime": runner.runtime_state(),
    }


def round_package(reader: Reader, trace_id: str, runner: Runner) -> dict[str, Any]:
    """The small per-round package: where the run stands and its runtime state."""
    head = reader.trace(trace_id).head
    return {
        **_position(reader, trace_id, head, runner, False),
        "runId": trace_id,
        "contextBudget": {"maxTokens": runner.config.window, "usedTokens": runner.cache.total},
        "focus": runner.goals.focus,
        "runtime": runner.runtime_state(),
    }


def _position(
    reader: Reader, trace_id: str, head: int | None, runner: Runner, done: bool
) -> dict[str, Any]:
    """Where the run stood: the next call made after this package is ``callIndex``; the
    compactions it had seen end at ``compactionId``."""
    newest = reader.conn.execute(
        select(func.max(t.compactions.c.id)).where(t.compactions.c.trace_id == trace_id)
    ).scalar()
    return {
        "version": PACKAGE_VERSION,
        "head": head,
        "callIndex": reader.llm_call_count(trace_id),
        "compactionId": int(newest) if newest is not None else None,
        "phase": "done" if done else str(runner.phase),
    }
