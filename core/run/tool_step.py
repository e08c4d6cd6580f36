"""TOOLS: one tool call per step — duplicates, hooks, the tool or a built-in, slimming
into refs, grants, audit."""

from __future__ import annotations

import asyncio
import json
import time
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
from core.run.base import INTRINSIC, RunnerCore, _with
from core.run.state import Phase, StepResult
from core.run.tools import Tool, ToolContext, ToolResult, parse_arguments
from core.skills import skill_tool_result
from core.store.writer import Writer


class ToolSteps(RunnerCore):
    # -- TOOLS ---------------------------------------------------------------------------------
    async def _tool_step(self) -> StepResult:
        call = self.turn.pending.pop(0)
        assert self.turn.call_message is not None
        started = time.perf_counter()
        self._emit(
            "tool_call",
            {"name": call.name, "arguments": call.arguments},
            self.turn.call_message.sequence,
            call.id,
        )
        blocked = self.monitors.duplicates.check(call)
        self.ledger.note_tool_call()
        status = "ok"
        if blocked is not None:
            result = ToolResult(blocked, is_error=True, metadata={"nudge": "duplicate_tool_call"})
            status = "blocked"
        else:
            result, status = await self._execute(call)
        with self.store.write() as w:  # the result and its audit row, together
            msgs = self._write_result(w, call, result)
            elapsed = (time.perf_counter() - started) * 1000
            w.add_audit(
                self.trace_id,
                call.name,
                status,
                elapsed,
                result.content,
                call.id,
                self.iteration,
                self.session_id,
            )
        self._emit(
            "tool_result",
            {"name": call.name, "status": status, "preview": result.content[:200]},
            msgs[0].sequence if msgs else None,
            call.id,
        )
        if not self.turn.pending:
            self.turn.phase = Phase.BOOKKEEPING
        return StepResult(Phase.TOOLS, self.turn.phase, tuple(m.sequence for m in msgs), call.name)

    async def _execute(self, call: ToolCall) -> tuple[ToolResult, str]:
        try:
            args = parse_arguments(call.arguments, call.name)
        except CtxlensError as exc:
            return ToolResult(f"Error: {exc}", is_error=True), "error"
        for decision in await self.hooks.fire(
            "pre_tool_use", {"tool": call.name, "arguments": args, "call_id": call.id}
        ):
            if decision.block:
                await self.hooks.fire("permission_denied", {"tool": call.name})
                return ToolResult(f"Blocked: {decision.block}", is_error=True), "blocked"
            if decision.arguments is not None:
                args = decision.arguments
        if call.name in INTRINSIC:
            try:
                return await self._intrinsic(call, args), "ok"
            except (CtxlensError, OSError) as exc:  # model-controlled input: an error result
                return ToolResult(f"Error: {call.name}: {exc}", is_error=True), "error"
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(sorted([*INTRINSIC, *self.tools.tools]))
            return ToolResult(f"Error: unknown tool {call.name!r} (known: {known})", True), "error"
        denied = await self._permission(tool, call, args)
        if denied is not None:
            return denied, "blocked"
        ctx = ToolContext(self.trace_id, call.id, self.iteration, self, self.agent_name)
        try:
            result = await asyncio.wait_for(tool.call(args, ctx), self.config.tool_timeout_s)
        except TimeoutError:
            limit = self.config.tool_timeout_s
            return ToolResult(f"Error: {call.name} timed out after {limit:g} s", True), "error"
        except Exception as exc:  # a tool's bug is the model's error message, not a crash
            text = f"Error: {call.name} failed: {type(exc).__name__}: {exc}"
            for d in await self.hooks.fire("tool_failure", {"tool": call.name, "error": text}):
                text = d.output or text
            return ToolResult(text, is_error=True), "error"
        for d in await self.hooks.fire(
            "post_tool_use", {"tool": call.name, "output": result.content}
        ):
            if d.output is not None:
                result = ToolResult(d.output, result.is_error, result.images, result.metadata)
        return result, "error" if result.is_error else "ok"

    async def _permission(
        self, tool: Tool, call: ToolCall, args: dict[str, Any]
    ) -> ToolResult | None:
        """A tool that may change things (not ``read_only``) asks ``permission_request``
        hooks first; one that says ``allow=False`` (or blocks) denies it (RUN-2)."""
        if tool.read_only:
            return None
        payload = {"tool": call.name, "arguments": args, "call_id": call.id}
        for decision in await self.hooks.fire("permission_request", payload):
            if decision.allow is False or decision.block:
                reason = decision.block or "permission denied"
                await self.hooks.fire("permission_denied", {"tool": call.name, "reason": reason})
                return ToolResult(f"Blocked: {reason}", is_error=True)
        return None

    async def _intrinsic(self, call: ToolCall, args: dict[str, Any]) -> ToolResult:
        name = call.name
        if name == GET_CURRENT_CONTEXT:
            return ToolResult(current_context_text(self._sources()))
        if name == "skill":
            res = skill_tool_result(self.skills, args)
            return ToolResult(res.text, not res.ok, metadata={"skill": args.get("name")})
        if name == "compress_context":
            self.turn.manual_compact = True
            return ToolResult("Compaction will run before the next model call.")
        if name == "save_memory":
            if self.memory is None:
                return ToolResult("Error: project memory is not configured for this run", True)
            saved, why = self.memory.save(str(args.get("type", "")), str(args.get("content", "")))
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

    def _write_result(self, w: Writer, call: ToolCall, result: ToolResult) -> list[Message]:
        assert self.turn.call_message is not None
        meta = dict(result.metadata or {})
        deferred = meta.pop("deferred", None)
        args = meta.pop("args", {})
        base: dict[str, Any] = {
            "tool_call_id": call.id,
            "name": call.name,
            "goal_id": self.goals.focus,
        }
        if deferred == "goal":
            return self._goal_result(w, call, args, base)
        if deferred == "read_ref":
            return self._read_ref_result(w, call, args)
        slim = slim_tool_output(
            self.trace_id,
            ToolOutput(
                call.name,
                result.content,
                call.arguments,
                tuple(ImageData.from_bytes(i.data, i.mime, i.description) for i in result.images),
            ),
            policy=self.config.slim_policy(),
            slimmers=self.slimmers,
            scope=self.ref_scope,
        )
        nm = NewMessage("tool", slim.content, metadata={**meta, **slim.metadata()} or None, **base)
        (msg,) = self._append(w, [nm])
        if slim.refs:
            store_refs(w, slim.refs, msg.sequence)
        self.ledger.note_output(len(slim.content.encode()))
        if call.name == "skill" and not result.is_error and args is not None:
            skill = (result.metadata or {}).get("skill")
            if skill:
                record_model_skill_load(
                    w, self.trace_id, str(skill), self.turn.call_message.sequence, msg.sequence
                )
        if call.name == "todo_write" and "todos" in meta:
            todos = [dict(t, id=t.get("id", n)) for n, t in enumerate(meta["todos"])]
            w.set_tasks(self.trace_id, msg.sequence, todos)
        if call.name in self.compactor.config.files.read_tools and self.compactor.files is not None:
            path = str(json.loads(call.arguments or "{}").get("path", call.arguments))
            self.compactor.files.record(path, result.content, msg.sequence)
        return [msg]

    def _goal_result(
        self, w: Writer, call: ToolCall, args: dict[str, Any], base: dict[str, Any]
    ) -> list[Message]:
        seq = w.next_sequence(self.trace_id)
        res = apply_goal_call(self.goals, args, self.trace_id, seq)
        (msg,) = self._append(w, [NewMessage("tool", res.text, **base)])
        assert msg.sequence == seq
        for ev in res.events:
            w.add_goal_event(ev)
            if ev.op in ("done", "abandon") and ev.goal_id:
                self.turn.goal_done.append(ev.goal_id)
        self.goals = res.tree
        return [msg]

    def _read_ref_result(self, w: Writer, call: ToolCall, args: dict[str, Any]) -> list[Message]:
        call = _resolve_ref_alias(w, self.trace_id, call, args)
        self._make_room_for_images(w, str(json.loads(call.arguments or "{}").get("ref", "")))
        view = self._view_in(w)
        plan = plan_read_ref(w.read, self.trace_id, self.ledger, call, ContextLoad.of_view(view))
        nm = _with(plan.tool_result(call.id, self.agent_name), goal_id=self.goals.focus)
        (msg,) = self._append(w, [nm])
        if plan.granted:
            grant = self.ledger.commit(w, self.trace_id, plan, msg.sequence)
            extra = plan.content_message(self.agent_name) if plan.image_url else None
            if extra is not None:  # an image follows in a user message; a text *is* the result
                self.turn.image_grants.append(extra)
            self._emit(
                "grant",
                {"ref": grant.ref_id, "cost": grant.cost, "by": "model"},
                msg.sequence,
                call.id,
            )
        else:
            self.ledger.record_denial(w, self.trace_id, plan)
            self._emit(
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
