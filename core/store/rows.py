"""Conversions between table rows and the records of ``core.records``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row

from core.records import (
    Checkpoint,
    CompactionEvent,
    ContextItem,
    ContextRef,
    GoalEvent,
    Grant,
    LlmCall,
    Message,
    SkillInjection,
    Trace,
    decode_items,
)
from core.store.message_fields import message_from
from core.store.paths import LineInfo


def message_from_row(r: Row[Any]) -> Message:
    return message_from(r._mapping)


def trace_from_row(r: Row[Any]) -> Trace:
    m = r._mapping
    return Trace(
        id=m["id"],
        title=m["title"],
        source=m["source"],
        created_at=m["created_at"],
        head=m["head_sequence"],
        messages=m["message_count"],
        metadata=m["metadata"],
    )


def line_from_row(r: Row[Any]) -> LineInfo:
    m = r._mapping
    return LineInfo(
        line=m["line"],
        parent_line=m["parent_line"],
        start_depth=m["start_depth"],
        start_sequence=m["start_sequence"],
        tip_sequence=m["tip_sequence"],
        tip_depth=m["tip_depth"],
        branch_type=m["branch_type"],
        branch_id=m["branch_id"],
    )


def context_from_json(data: list[Any]) -> tuple[ContextItem, ...]:
    return decode_items(data)


def call_from_row(r: Row[Any]) -> LlmCall:
    m = r._mapping
    return LlmCall(
        id=m["id"],
        trace_id=m["trace_id"],
        call_index=m["call_index"],
        context=context_from_json(m["context"]),
        request_sha256=m["request_sha256"],
        model=m["model"],
        head_sequence=m["head_sequence"],
        response_sequence=m["response_sequence"],
        usage=m["usage"],
        latency_ms=m["latency_ms"],
        error=m["error"],
        agent_name=m["agent_name"],
        branch_type=m["branch_type"],
        created_at=m["created_at"],
        params=m["params"],
    )


def compaction_from_row(r: Row[Any]) -> CompactionEvent:
    m = r._mapping
    return CompactionEvent(
        id=m["id"],
        trace_id=m["trace_id"],
        level=m["level"],
        trigger=m["trigger"],
        at_sequence=m["at_sequence"],
        removed=tuple(m["removed"]),
        context_after=context_from_json(m["context_after"]),
        tokens_before=m["tokens_before"],
        tokens_after=m["tokens_after"],
        messages_before=m["messages_before"],
        messages_after=m["messages_after"],
        summary_sequence=m["summary_sequence"],
        goal_id=m["goal_id"],
        details=m["details"],
        created_at=m["created_at"],
    )


def checkpoint_from_row(r: Row[Any]) -> Checkpoint:
    m = r._mapping
    return Checkpoint(
        id=m["id"],
        trace_id=m["trace_id"],
        generation=m["generation"],
        type=m["type"],
        object_key=m["object_key"],
        token_count=m["token_count"],
        sha256=m["sha256"],
        size=m["size"],
        created_at=m["created_at"],
    )


def ref_from_row(r: Row[Any]) -> ContextRef:
    m = r._mapping
    return ContextRef(
        id=m["id"],
        trace_id=m["trace_id"],
        kind=m["kind"],
        description=m["description"],
        tokens=m["tokens"],
        bytes=m["bytes"],
        image_blocks=m["image_blocks"],
        source_sequence=m["source_sequence"],
        content=m["content"],
        created_at=m["created_at"],
        metadata=m["metadata"],
    )


def grant_from_row(r: Row[Any]) -> Grant:
    m = r._mapping
    return Grant(
        id=m["id"],
        trace_id=m["trace_id"],
        ref_id=m["ref_id"],
        granted_by=m["granted_by"],
        reason=m["reason"],
        cost=m["cost"],
        granted_at_sequence=m["granted_at_sequence"],
        message_sequence=m["message_sequence"],
        revoked_at_sequence=m["revoked_at_sequence"],
        revoked_reason=m["revoked_reason"],
        created_at=m["created_at"],
    )


def skill_injection_from_row(r: Row[Any]) -> SkillInjection:
    m = r._mapping
    return SkillInjection(
        id=m["id"],
        trace_id=m["trace_id"],
        skill=m["skill"],
        message_sequence=m["message_sequence"],
        call_sequence=m["call_sequence"],
        reason=m["reason"],
        created_at=m["created_at"],
    )


def goal_event_from_row(r: Row[Any]) -> GoalEvent:
    m = r._mapping
    return GoalEvent(
        id=m["id"],
        trace_id=m["trace_id"],
        sequence=m["sequence"],
        op=m["op"],
        goal_id=m["goal_id"],
        payload=m["payload"],
    )
