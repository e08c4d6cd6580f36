"""MODEL: one model call with retries and the recovery ladder (LLM-3/4); every attempt
recorded as an ``llm_calls`` row with the exact items sent and their sha256."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.context.view import View
from core.errors import CtxlensError
from core.llm import (
    CallCancelled,
    LadderEntry,
    ModelCallError,
    ModelResponse,
    RecoveryActions,
    call_with_recovery,
)
from core.llm.response import StreamEvent, TextDelta
from core.records import LlmCall, Message, NewMessage
from core.run.base import RunnerCore
from core.run.compacting import inject_caller_skills, maybe_compact
from core.run.context_cache import ContextCache
from core.run.state import Phase, StepResult
from core.run.turn import TurnState
from core.store.writer import Writer


@dataclass(frozen=True)
class Sent:
    """What one attempt of a model call sent: the View, its rendered messages and their
    sha256, the estimated tokens, the encoded items, the last message it could contain."""

    view: View
    messages: tuple[dict[str, Any], ...]
    sha256: str
    tokens: int
    encoded: list[Any]
    head: int | None

    @classmethod
    def of(cls, view: View, cache: ContextCache) -> Sent:
        head = cache.stamp[0] if cache.stamp else None
        messages = tuple(cache.openai())
        return cls(view, messages, cache.sha256(), cache.total, list(cache.encoded), head)


class ModelRequest:
    """The MODEL node: one call through the recovery ladder, over the runner and the turn.
    The attempt in flight (``Sent``) is the node's own: the ladder may rebuild it, and the
    failed attempts are recorded as they were sent."""

    def __init__(self, rt: RunnerCore, turn: TurnState) -> None:
        self.rt = rt
        self.turn = turn
        self.tools = None if turn.final_only else rt.tool_schemas()
        self.tool_choice = "none" if turn.final_only else None
        self.sent: Sent | None = None

    async def prepare(self) -> list[dict[str, Any]]:
        self.sent = Sent.of(self.rt.view(), self.rt.cache)
        return list(self.sent.messages)

    async def send(self, messages: Sequence[Mapping[str, Any]], model: str) -> ModelResponse:
        rt, started = self.rt, time.perf_counter()
        try:
            return await rt.model.complete(
                messages,
                model=model,
                tools=self.tools,
                tool_choice=self.tool_choice,
                on_event=lambda event: on_stream(rt, event),
                cancel=rt.cancel_event,
                **request_params(rt),
            )
        except ModelCallError as err:
            ms = (time.perf_counter() - started) * 1000
            assert self.sent is not None
            with rt.store.write() as w:
                record_call(rt, w, self.sent, model, None, None, ms, err)
            raise

    async def call(self) -> ModelResponse:
        rt = self.rt
        actions = RecoveryActions(
            aggressive_compact=lambda err: ladder_compact(rt, "aggressive"),
            summary_compact=lambda err: ladder_compact(rt, "summary"),
            raise_hard_limit=lambda err: raise_hard_limit(rt),
            multi_turn=lambda err: multi_turn(rt),
        )
        return await call_with_recovery(
            self.prepare,
            self.send,
            actions=actions,
            model=rt.config.model,
            fallback_model=rt.config.fallback_model,
            clock=rt.clock,
            cancel=rt.cancel_event,
            on_retry=lambda notice: rt.emit("error", {"retry": str(notice)}),
            on_recovery=lambda entry: on_recovery(rt, entry),
            jitter_key=rt.trace_id,
            request_extra=lambda: request_params(rt),
            policy=rt.config.retry_policy(),
        )

    async def run(self) -> StepResult:
        """Call, record, and go on: TOOLS for tool calls, PREPARE for a continuation,
        BOOKKEEPING for a final answer, DONE when the call gave up."""
        rt, turn = self.rt, self.turn
        try:
            response = await self.call()
        except CallCancelled:
            raise
        except CtxlensError as err:
            turn.phase = Phase.DONE  # already, for whoever listens to the events below
            turn.errors.append(str(err))
            rt.emit("error", {"error": str(err)})
            rt.emit("done", {"reason": "error"})
            return StepResult(Phase.MODEL, Phase.DONE, (), f"model error: {err}")
        assert self.sent is not None
        msg = self.record(response, self.sent)
        turn.last_step = (msg.token_count, [c.name for c in response.tool_calls])
        if response.tool_calls:
            turn.start_round(msg)
            after = Phase.TOOLS
        else:
            turn.end_round()
            if continue_after(rt, response):
                after = Phase.PREPARE
            else:
                turn.final = response.text
                after = Phase.BOOKKEEPING
        return StepResult(Phase.MODEL, after, (msg.sequence,), response.finish_reason or "")

    def record(self, response: ModelResponse, sent: Sent) -> Message:
        """The assistant message and its ``llm_calls`` row, in one transaction."""
        rt = self.rt
        nm = response.to_message(goal_id=rt.goals.focus, agent_name=rt.agent_name)
        with rt.store.write() as w:
            (msg,) = rt.append(w, [nm])
            model = response.model or rt.config.model
            record_call(rt, w, sent, model, response, msg.sequence, response.latency_ms, None)
        rt.note_usage(response.usage, sent.tokens)
        rt.iteration += 1
        self.turn.steps += 1
        if response.text:
            rt.emit("thought", {"text": response.text}, msg.sequence)
        if response.usage:
            rt.emit("usage", dict(response.usage), msg.sequence)
        return msg


async def request_model(rt: RunnerCore, turn: TurnState) -> StepResult:
    """MODEL (``core/run/runner.py:PHASES``)."""
    return await ModelRequest(rt, turn).run()


def continue_after(rt: RunnerCore, response: ModelResponse) -> bool:
    """Seed B's continuation: a text reply does not end the turn while the reply was cut
    off or goals are still open, steps remain and the run may still use tools; the
    next PREPARE counts it for diminishing returns (INJ-5), which forces the final
    answer when continuing stops paying off."""
    if not rt.config.continue_unfinished or rt.turn.final_only or not rt.lane.main_duties:
        return False
    if rt.turn.steps >= rt.config.max_steps - 1:
        return False
    cut = response.finish_reason == "length"
    open_goals = [g.id for g in rt.goals.goals if not g.finished]
    if not cut and not open_goals:
        return False
    why = "your reply was cut off" if cut else f"goals {', '.join(open_goals)} are open"
    nm = NewMessage(
        "user",
        f"[Continue] The task is not finished ({why}). Continue with the next step, "
        "or finish the open goals with the goal tool.",
        kind="nudge",
        metadata={"nudge": "continuation"},
        goal_id=rt.goals.focus,
    )
    with rt.store.write() as w:
        (msg,) = rt.append(w, [nm])
    rt.emit("nudge", {"name": "continuation", "text": nm.content}, msg.sequence)
    return True


def on_stream(rt: RunnerCore, event: StreamEvent) -> None:
    if isinstance(event, TextDelta):
        rt.emit("text_delta", {"text": event.text})


def on_recovery(rt: RunnerCore, entry: LadderEntry) -> None:
    if entry.changed:
        rt.turn.recovered.append(entry.step.value)  # kept with the next call's row
    rt.emit("error", {"recovery": entry.step.value, "changed": entry.changed})


async def ladder_compact(rt: RunnerCore, level: str) -> bool:
    done = await maybe_compact(rt, manual=True, level=level) is not None
    if done:
        inject_caller_skills(rt)  # the retried call carries them too
    return done


def request_params(rt: RunnerCore) -> dict[str, Any]:
    """What the request carries besides messages and tools: the output limit, once
    set (``max_output_tokens`` or the ladder's escalation)."""
    return {"params": {"max_tokens": rt.max_output}} if rt.max_output else {}


async def raise_hard_limit(rt: RunnerCore) -> bool:
    """EscalateTokens (seed B): the token hard limit and the request's output limit
    go up to ``escalation_limit``; nothing to do when both already are there."""
    budget, limit = rt.monitors.budget, rt.config.escalation_limit
    if budget.hard_limit >= limit and (rt.max_output or 0) >= limit:
        return False
    budget.hard_limit = max(budget.hard_limit, limit)
    rt.max_output = limit
    return True


async def multi_turn(rt: RunnerCore) -> bool:
    """The ladder's multi-turn step: ask for smaller steps."""
    nm = NewMessage(
        "user",
        "The last request was too long for the model. Continue in smaller steps: do one "
        "thing per reply and keep tool arguments short.",
        kind="nudge",
        metadata={"nudge": "multi_turn_recovery"},
    )
    with rt.store.write() as w:
        rt.append(w, [nm])
    return True


def record_call(
    rt: RunnerCore,
    w: Writer,
    sent: Sent,
    model: str,
    response: ModelResponse | None,
    response_seq: int | None,
    latency_ms: float | None,
    error: ModelCallError | None,
) -> None:
    """One ``llm_calls`` row: the exact items sent and the sha256 of the request."""
    w.record_llm_call(
        LlmCall(
            trace_id=rt.trace_id,
            call_index=w.next_call_index(rt.trace_id),
            context=tuple(sent.view.items),  # a record: flat (free for a tuple)
            request_sha256=sent.sha256,
            model=model,
            head_sequence=sent.head,
            response_sequence=response_seq,
            usage=dict(response.usage) if response and response.usage else None,
            latency_ms=latency_ms,
            error=json.dumps(error.to_json()) if error is not None else None,
            agent_name=rt.agent_name,
            branch_type=rt.lane.branch_type,
            params={
                "tools": not rt.turn.final_only,
                "input_tokens": sent.tokens,
                "finish_reason": response.finish_reason if response else None,
                **({"prepare": rt.turn.prepared_from} if rt.turn.prepared_from else {}),
                **({"recovery": list(rt.turn.recovered)} if rt.turn.recovered else {}),
            },
        ),
        encoded=sent.encoded,
    )
    rt.turn.recovered = []
