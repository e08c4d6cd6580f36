"""TOOLS: one tool call per step — duplicates, hooks, the tool or a built-in, slimming
into refs, grants, audit."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

from core.context.periodic import (
    GET_CURRENT_CONTEXT,
    current_context_text,
)
from core.context.skill_injection import (
    record_model_skill_load,
)
from core.errors import CtxlensError
from core.goals import apply_goal_call
from core.records import Message, NewMessage, ToolCall
from core.refs import (
    ContextLoad,
    ToolOutput,
    plan_read_ref,
    slim_tool_output,
    store_refs,
)
from core.refs.slimming import ImageData
from core.run.base import INTRINSIC, RunnerCore
from core.run.state import Phase, StepResult
from core.run.tools import Tool, ToolContext, ToolResult, parse_arguments
from core.run.turn import TurnState
from core.skills import skill_tool_result
from core.store.writer import Writer


async def call_tool(rt: RunnerCore, turn: TurnState) -> StepResult:
    """TOOLS: the round's next call (TOOLS again while calls remain, then BOOKKEEPING)."""
    call = turn.pending.pop(0)
    assert turn.call_message is not None
    started = time.perf_counter()
    rt.emit(
        "tool_call",
        {"name": call.name, "arguments": call.arguments},
        turn.call_message.sequence,
        call.id,
    )
    blocked = rt.monitors.duplicates.check(call)
    rt.ledger.note_tool_call()
    status = "ok"
    if blocked is not None:
        result = ToolResult(blocked, is_error=True, metadata={"nudge": "duplicate_tool_call"})
        status = "blocked"
    else:
        result, status = await execute(rt, call)
    with rt.store.write() as w:  # the result and its audit row, together
        msgs = write_result(rt, w, call, result)
        elapsed = (time.perf_counter() - started) * 1000
        w.add_audit(
            rt.trace_id,
            call.name,
            status,
            elapsed,
            result.content,
            call.id,
            rt.iteration,
            rt.session_id,
        )
    rt.emit(
        "tool_result",
        {"name": call.name, "status": status, "preview": result.content[:200]},
        msgs[0].sequence if msgs else None,
        call.id,
    )
    after = Phase.TOOLS if turn.pending else Phase.BOOKKEEPING
    return StepResult(Phase.TOOLS, after, tuple(m.sequence for m in msgs), call.name)


async def execute(rt: RunnerCore, call: ToolCall) -> tuple[ToolResult, str]:
    try:
        args = parse_arguments(call.arguments, call.name)
    except CtxlensError as exc:
        return ToolResult(f"Error: {exc}", is_error=True), "error"
    for decision in await rt.hooks.fire(
        "pre_tool_use", {"tool": call.name, "arguments": args, "call_id": call.id}
    ):
        if decision.block:
            await rt.hooks.fire("permission_denied", {"tool": call.name})
            return ToolResult(f"Blocked: {decision.block}", is_error=True), "blocked"
        if decision.arguments is not None:
            args = decision.arguments
    if call.name in INTRINSIC:
        try:
            return await intrinsic(rt, call, args), "ok"
        except (CtxlensError, OSError) as exc:  # model-controlled input: an error result
            return ToolResult(f"Error: {call.name}: {exc}", is_error=True), "error"
    tool = rt.tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted([*INTRINSIC, *rt.tools.tools]))
        return ToolResult(f"Error: unknown tool {call.name!r} (known: {known})", True), "error"
    denied = await permission(rt, tool, call, args)
    if denied is not None:
        return denied, "blocked"
    ctx = ToolContext(rt.trace_id, call.id, rt.iteration, rt, rt.agent_name)
    try:
        result = await asyncio.wait_for(tool.call(args, ctx), rt.config.tool_timeout_s)
    except TimeoutError:
        limit = rt.config.tool_timeout_s
        return ToolResult(f"Error: {call.name} timed out after {limit:g} s", True), "error"
    except Exception as exc:  # a tool's bug is the model's error message, not a crash
        text = f"Error: {call.name} failed: {type(exc).__name__}: {exc}"
        for d in await rt.hooks.fire("tool_failure", {"tool": call.name, "error": text}):
            text = d.output or text
        return ToolResult(text, is_error=True), "error"
    for d in await rt.hooks.fire("post_tool_use", {"tool": call.name, "output": result.content}):
        if d.output is not None:
            result = ToolResult(d.output, result.is_error, result.images, result.metadata)
    return result, "error" if result.is_error else "ok"


async def permission(
    rt: RunnerCore, tool: Tool, call: ToolCall, args: dict[str, Any]
) -> ToolResult | None:
    """A tool that may change things (not ``read_only``) asks ``permission_request``
    hooks first; one that says ``allow=False`` (or blocks) denies it (RUN-2)."""
    if tool.read_only:
        return None
    payload = {"tool": call.name, "arguments": args, "call_id": call.id}
    for decision in await rt.hooks.fire("permission_request", payload):
        if decision.allow is False or decision.block:
            reason = decision.block or "permission denied"
            await rt.hooks.fire("permission_denied", {"tool": call.name, "reason": reason})
            return ToolResult(f"Blocked: {reason}", is_error=True)
    return None


async def intrinsic(rt: RunnerCore, call: ToolCall, args: dict[str, Any]) -> ToolResult:
    name = call.name
    if name == GET_CURRENT_CONTEXT:
        return ToolResult(current_context_text(rt.periodic_sources()))
    if name == "skill":
        res = skill_tool_result(rt.skills, args)
        return ToolResult(res.text, not res.ok, metadata={"skill": args.get("name")})
    if name == "compress_context":
        rt.turn.manual_compact = True
        return ToolResult("Compaction will run before the next model call.")
    if name == "save_memory":
        if rt.memory is None:
            return ToolResult("Error: project memory is not configured for this run", True)
        saved, why = rt.memory.save(str(args.get("type", "")), str(args.get("content", "")))
        return ToolResult(("Saved: " if saved else "Not saved: ") + why, not saved)
    if name == "todo_write":
        todos = args.get("todos")
        if not isinstance(todos, list):
            return ToolResult("Error: todo_write needs todos = [{id, content, status}]", True)
        lines = [
            f"- [{t.get('status', 'pending')}] {t.get('content', '')}"
            for t in todos
            if isinstance(t, dict)
        ]
        return ToolResult("Task list updated:\n" + "\n".join(lines), metadata={"todos": todos})
    # goal and read_ref write records tied to the result's sequence: see _write_result
    return ToolResult("", metadata={"deferred": name, "args": args})


def write_result(rt: RunnerCore, w: Writer, call: ToolCall, result: ToolResult) -> list[Message]:
    assert rt.turn.call_message is not None
    meta = dict(result.metadata or {})
    if result.is_error:  # as an imported tool result says it (the timeline's error badge)
        meta["is_error"] = True
    deferred = meta.pop("deferred", None)
    args = meta.pop("args", {})
    base: dict[str, Any] = {
        "tool_call_id": call.id,
        "name": call.name,
        "goal_id": rt.goals.focus,
    }
    if deferred == "goal":
        return goal_result(rt, w, args, base)
    if deferred == "read_ref":
        return read_ref_result(rt, w, call, args)
    slim = slim_tool_output(
        rt.trace_id,
        ToolOutput(
            call.name,
            result.content,
            call.arguments,
            tuple(ImageData.from_bytes(i.data, i.mime, i.description) for i in result.images),
        ),
        policy=rt.config.slim_policy(),
        slimmers=rt.slimmers,
        scope=rt.ref_scope,
    )
    nm = NewMessage("tool", slim.content, metadata={**meta, **slim.metadata()} or None, **base)
    (msg,) = rt.append(w, [nm])
    if slim.refs:
        store_refs(w, slim.refs, msg.sequence)
    rt.ledger.note_output(len(slim.content.encode()))
    if call.name == "skill" and not result.is_error and args is not None:
        skill = (result.metadata or {}).get("skill")
        if skill:
            record_model_skill_load(
                w, rt.trace_id, str(skill), rt.turn.call_message.sequence, msg.sequence
            )
    if call.name == "todo_write" and "todos" in meta:
        todos = [dict(t, id=t.get("id", n)) for n, t in enumerate(meta["todos"])]
        w.set_tasks(rt.trace_id, msg.sequence, todos)
    if call.name in rt.compactor.config.files.read_tools and rt.compactor.files is not None:
        path = str(json.loads(call.arguments or "{}").get("path", call.arguments))
        rt.compactor.files.record(path, result.content, msg.sequence)
    return [msg]


def goal_result(
    rt: RunnerCore, w: Writer, args: dict[str, Any], base: dict[str, Any]
) -> list[Message]:
    seq = w.next_sequence(rt.trace_id)
    res = apply_goal_call(rt.goals, args, rt.trace_id, seq)
    (msg,) = rt.append(w, [NewMessage("tool", res.text, **base)])
    assert msg.sequence == seq
    for ev in res.events:
        w.add_goal_event(ev)
        if ev.op in ("done", "abandon") and ev.goal_id:
            rt.turn.goal_done.append(ev.goal_id)
    rt.goals = res.tree
    return [msg]


def read_ref_result(
    rt: RunnerCore, w: Writer, call: ToolCall, args: dict[str, Any]
) -> list[Message]:
    call = _resolve_ref_alias(w, rt.trace_id, call, args)
    rt.make_room_for_images(w, str(json.loads(call.arguments or "{}").get("ref", "")))
    view = rt.view_in(w)
    plan = plan_read_ref(w.read, rt.trace_id, rt.ledger, call, ContextLoad.of_view(view))
    nm = replace(plan.tool_result(call.id, rt.agent_name), goal_id=rt.goals.focus)
    (msg,) = rt.append(w, [nm])
    if plan.granted:
        grant = rt.ledger.commit(w, rt.trace_id, plan, msg.sequence)
        extra = plan.content_message(rt.agent_name) if plan.image_url else None
        if extra is not None:  # an image follows in a user message; a text *is* the result
            rt.turn.image_grants.append(extra)
        rt.emit(
            "grant",
            {"ref": grant.ref_id, "cost": grant.cost, "by": "model"},
            msg.sequence,
            call.id,
        )
    else:
        rt.ledger.record_denial(w, rt.trace_id, plan)
        rt.emit(
            "grant",
            {"ref": plan.request.ref_id, "refused": plan.decision.reason},
            msg.sequence,
            call.id,
        )
    return [msg]


def _resolve_ref_alias(w: Writer, trace_id: str, call: ToolCall, args: dict[str, Any]) -> ToolCall:
    """Let ``read_ref`` name a ref by a domain key it was slimmed under (``win-1001``)."""
    ref = str(args.get("ref", ""))
    refs = w.read.refs(trace_id)
    if not ref or any(r.id == ref for r in refs):
        return call
    for r in refs:
        meta = r.metadata or {}
        if meta.get("key") == ref or r.description.startswith(ref):
            fixed = {**args, "ref": r.id}
            return ToolCall(call.id, call.name, json.dumps(fixed))
    return call
