"""Where a replay from call N starts, and copying the source up to there into a new trace.

The cut is exact when call N's record says where its PREPARE began (the runner stores the
head, the newest compaction and its runtime state with every main-agent call:
``params.prepare``): everything up to that head is copied, the runtime state is restored,
and the replay runs call N's PREPARE itself — so other settings can already change call N.
Without it (an imported trace, an older run) the copy ends at call N's head, call N is
sent with the context it had, and the new settings apply from the next PREPARE.

Copying keeps every sequence number, so boundaries, goal events, grants and call item
lists stay valid; the replay keeps its source's ref scope, so ref ids stay the same too
(a ``renamer`` is applied to every copied text when they must differ, and copied calls
then get their request hash recomputed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.agents import is_main_agent
from core.context.view import request_sha256, resolve
from core.errors import InvalidInputError
from core.fields_json import fields_json
from core.records import Message, ToolCall
from core.replay.calls import CallRef
from core.replay.refmap import RefRenamer
from core.run.state import Phase
from core.store.writer import Writer
from core.tokens import count_message

BATCH = 1000


@dataclass(frozen=True)
class Cut:
    """What a replay from ``call_index`` copies, and where its run picks up."""

    call_index: int
    """Calls before this index are copied (0 with nothing copied: a fresh run)."""
    head: int | None
    """Messages up to this sequence are copied (``None``: nothing)."""
    compaction_id: int | None = None
    """Only compactions up to this id (-1: none); ``None``: all anchored in the prefix."""
    state: dict[str, Any] | None = None
    """The runtime state to restore (from the checkpoint)."""
    phase: Phase = Phase.PREPARE

    @property
    def fresh(self) -> bool:
        return self.head is None

    @property
    def start(self) -> str:
        """fresh | prepare (exact: call N's PREPARE runs again) | call (call N is sent with
        its recorded context)."""
        if self.fresh:
            return "fresh"
        return "prepare" if self.state is not None else "call"


def cut_before(calls: list[CallRef], from_call: int, live: list[CallRef] | None = None) -> Cut:
    """The cut for a replay from call ``from_call`` (a main-agent call of the current run,
    by position; ``live``: the calls not left behind by a rewind)."""
    if not 0 <= from_call < max(len(calls), 1):
        raise InvalidInputError(
            f"--from-call {from_call}: the trace has calls 0..{len(calls) - 1}"
            if calls
            else f"--from-call {from_call}: the trace has no model calls"
        )
    if not calls:
        return Cut(0, None)
    call = calls[from_call]
    if not is_main_agent(call):
        mains = [c.position for c in calls if is_main_agent(c)]
        before = max((p for p in mains if p < from_call), default=None)
        after = min((p for p in mains if p > from_call), default=None)
        raise InvalidInputError(
            f"--from-call {from_call}: that is a call of {call.agent_name} on a "
            f"{call.branch_type} side branch, not the main agent's; replay from a main-agent "
            f"call (the nearest are {before} and {after})"
        )
    if live is not None and call not in live:
        raise InvalidInputError(
            f"--from-call {from_call}: that call is on a branch a rewind abandoned; replay "
            "from a call of the current run"
        )
    if not any(is_main_agent(c) and c.answered for c in calls[:from_call]):
        return Cut(0, None)
    params = call.params if isinstance(call.params, dict) else {}
    point = params.get("prepare")
    if isinstance(point, dict) and isinstance(point.get("state"), dict):
        return Cut(
            from_call,
            point.get("head"),
            point.get("compaction_id") if point.get("compaction_id") is not None else -1,
            dict(point["state"]),
            Phase.PREPARE,
        )
    return Cut(from_call, call.head, None, None, Phase.MODEL)


def covering(cut: Cut, call: CallRef, sequence: int) -> Cut:
    """``cut``, or a cut at ``call``'s recorded head when the prepare point lies before
    message ``sequence`` (a fork must copy the message it edits)."""
    if cut.head is not None and cut.head >= sequence:
        return cut
    return Cut(cut.call_index, call.head, None, None, Phase.MODEL)


@dataclass(frozen=True)
class Copied:
    messages: int = 0
    calls: int = 0
    compactions: int = 0
    refs: int = 0
    clock_ticks: int = 0
    """``get_current_context`` results copied (readings of the run's wall clock)."""

    def to_json(self) -> dict[str, int]:
        return fields_json(self, "messages", "calls", "compactions", "refs")


def copy_prefix(
    w: Writer,
    source: str,
    target: str,
    cut: Cut,
    renamer: RefRenamer,
    edits: Mapping[int, str] | None = None,
) -> Copied:
    """Copy the source up to ``cut`` into the (new, empty) trace ``target``; a message in
    ``edits`` (sequence -> content) is copied with that content (a fork with an edit)."""
    if cut.head is None:
        return Copied()
    head = cut.head
    msgs = [
        _edited(m, edits[m.sequence]) if edits and m.sequence in edits else m
        for m in w.read.all_messages(source)
        if m.sequence <= head
    ]
    for i in range(0, len(msgs), BATCH):
        w.restore_messages([_renamed(m, target, renamer) for m in msgs[i : i + BATCH]])
    w.set_head(target, head)
    rows = _record_rows(w, source, cut, {m.tool_call_id for m in msgs if m.tool_call_id})
    for table, values in rows.items():
        fixed = [{**renamer.json(v), "trace_id": target} for v in values]
        w.insert_rows(table, fixed)
    w.flush()
    _rehash_calls(w, target)
    ticks = sum(1 for m in msgs if m.role == "tool" and m.name == "get_current_context")
    return Copied(
        len(msgs), len(rows["llm_calls"]), len(rows["compactions"]), len(rows["refs"]), ticks
    )


def _edited(m: Message, content: str) -> Message:
    """``m`` with the user's content, counted again and marked as edited (the original's
    tokens kept in its metadata: the inspector shows the edit, never hides it)."""
    tokens = count_message(m.role, content, m.tool_calls, m.name, None).tokens
    meta = dict(m.metadata) if isinstance(m.metadata, dict) else {}
    meta["edited"] = {"original_tokens": m.token_count, "original_chars": len(m.content)}
    return replace(m, content=content, parts=None, token_count=tokens, metadata=meta)


def _renamed(m: Message, target: str, renamer: RefRenamer) -> Message:
    content = renamer(m.content)
    calls = tuple(ToolCall(c.id, c.name, renamer(c.arguments)) for c in m.tool_calls)
    parts = renamer.json(list(m.parts)) if m.parts is not None else None
    changed = content != m.content or calls != m.tool_calls
    tokens = m.token_count
    if changed:
        tokens = count_message(m.role, content, calls, m.name, parts).tokens
    return replace(
        m,
        trace_id=target,
        content=content,
        tool_calls=calls,
        parts=tuple(parts) if parts is not None else None,
        metadata=renamer.json(m.metadata),
        token_count=tokens,
    )


def _record_rows(
    w: Writer, source: str, cut: Cut, result_ids: set[str]
) -> dict[str, list[dict[str, Any]]]:
    head = cut.head
    assert head is not None
    r = w.read

    def rows(table: str) -> list[dict[str, Any]]:
        return [dict(x) for x in r.table_rows(table, source)]

    def upto(value: Any) -> bool:
        return value is not None and value <= head

    compactions = [
        x
        for x in rows("compactions")
        if (x["at_sequence"] is None or x["at_sequence"] <= head)
        and (cut.compaction_id is None or x["id"] <= cut.compaction_id)
    ]
    refs = [x for x in rows("refs") if x["source_sequence"] is None or upto(x["source_sequence"])]
    ref_ids = {x["id"] for x in refs}
    grants = []
    for g in rows("grants"):
        at = (
            g["granted_at_sequence"]
            if g["granted_at_sequence"] is not None
            else g["message_sequence"]
        )
        if g["ref_id"] in ref_ids and upto(at):
            if g["revoked_at_sequence"] is not None and g["revoked_at_sequence"] > head:
                g = {**g, "revoked_at_sequence": None, "revoked_reason": None}
            grants.append(g)
    out = {
        "llm_calls": [x for x in rows("llm_calls") if x["call_index"] < cut.call_index],
        "compactions": compactions,
        "goal_events": [x for x in rows("goal_events") if upto(x["sequence"])],
        "tasks": [x for x in rows("tasks") if upto(x["sequence"])],
        "skill_injections": [x for x in rows("skill_injections") if upto(x["message_sequence"])],
        "refs": refs,
        "grants": grants,
        "audit_log": [x for x in rows("audit_log") if x["tool_call_id"] in result_ids],
        "run_events": [x for x in rows("run_events") if upto(x["sequence"])],
    }
    return {
        table: [{k: v for k, v in x.items() if k != "id" or table == "refs"} for x in values]
        for table, values in out.items()
    }


def _rehash_calls(w: Writer, target: str) -> None:
    """Copied calls: the sha256 of the renamed request (the trace stays self-consistent)."""
    from sqlalchemy import update

    from core.store import schema as t

    for call in w.read.llm_calls(target):
        view = resolve(w.read, target, call.context)
        sha = request_sha256(view.openai())
        if sha != call.request_sha256:
            w.conn.execute(
                update(t.llm_calls)
                .where(
                    t.llm_calls.c.trace_id == target, t.llm_calls.c.call_index == call.call_index
                )
                .values(request_sha256=sha)
            )
