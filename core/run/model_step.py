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
    RetryNotice,
    call_with_recovery,
)
from core.llm.response import StreamEvent, TextDelta
from core.records import LlmCall, NewMessage
from core.run.compacting import CompactionSteps
from core.run.context_cache import ContextCache
from core.run.state import Phase, StepResult
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


class ModelSteps(CompactionSteps):
    # -- MODEL ---------------------------------------------------------------------------------
    async def _model_step(self) -> StepResult:
        tools = None if self.turn.final_only else self.tool_schemas()
        tool_choice = "none" if self.turn.final_only else None
        sent: list[Sent] = []  # the attempt now in flight (the ladder may rebuild it)

        async def prepare() -> list[dict[str, Any]]:
            sent[:] = [Sent.of(self.view(), self.cache)]
            return list(sent[0].messages)

        async def send(messages: Sequence[Mapping[str, Any]], model: str) -> ModelResponse:
            started = time.perf_counter()
            try:
                return await self.model.complete(
                    messages,
                    model=model,
                    tools=tools,
                    tool_choice=tool_choice,
                    on_event=self._on_stream,
                    cancel=self._cancel,
                    **self._request_params(),
                )
            except ModelCallError as err:
                ms = (time.perf_counter() - started) * 1000
                with self.store.write() as w:
                    self._record_call_in(w, sent[0], model, None, None, ms, err)
                raise

        actions = RecoveryActions(
            aggressive_compact=lambda err: self._ladder_compact("aggressive"),
            summary_compact=lambda err: self._ladder_compact("summary"),
            raise_hard_limit=self._raise_hard_limit,
            multi_turn=self._multi_turn,
        )
        try:
            response = await call_with_recovery(
                prepare,
                send,
                actions=actions,
                model=self.config.model,
                fallback_model=self.config.fallback_model,
                clock=self.clock,
                cancel=self._cancel,
                on_retry=self._on_retry,
                on_recovery=self._on_recovery,
                jitter_key=self.trace_id,
                request_extra=self._request_params,
                policy=self.config.retry_policy(),
            )
        except CallCancelled:
            raise
        except CtxlensError as err:
            self.turn.phase = Phase.DONE
            self.turn.errors.append(str(err))
            self._emit("error", {"error": str(err)})
            self._emit("done", {"reason": "error"})
            return StepResult(Phase.MODEL, Phase.DONE, (), f"model error: {err}")
        nm = response.to_message(goal_id=self.goals.focus, agent_name=self.agent_name)
        with self.store.write() as w:
            (msg,) = self._append(w, [nm])
            self._record_call_in(
                w,
                sent[0],
                response.model or self.config.model,
                response,
                msg.sequence,
                response.latency_ms,
                None,
            )
        self._note_usage(response.usage, sent[0].tokens)
        self.iteration += 1
        self.turn.steps += 1
        if response.text:
            self._emit("thought", {"text": response.text}, msg.sequence)
        if response.usage:
            self._emit("usage", dict(response.usage), msg.sequence)
        self.turn.last_step = (msg.token_count, [c.name for c in response.tool_calls])
        if response.tool_calls:
            self.turn.start_round(msg)
            self.turn.phase = Phase.TOOLS
        else:
            self.turn.end_round()
            if self._continue_after(response):
                self.turn.phase = Phase.PREPARE
            else:
                self.turn.final = response.text
                self.turn.phase = Phase.BOOKKEEPING
        return StepResult(
            Phase.MODEL, self.turn.phase, (msg.sequence,), response.finish_reason or ""
        )

    def _continue_after(self, response: ModelResponse) -> bool:
        """Seed B's continuation: a text reply does not end the turn while the reply was cut
        off or goals are still open, steps remain and the run may still use tools; the
        next PREPARE counts it for diminishing returns (INJ-5), which forces the final
        answer when continuing stops paying off."""
        if not self.config.continue_unfinished or self.turn.final_only or not self.lane.main_duties:
            return False
        if self.turn.steps >= self.config.max_steps - 1:
            return False
        cut = response.finish_reason == "length"
        open_goals = [g.id for g in self.goals.goals if not g.finished]
        if not cut and not open_goals:
            return False
        why = "your reply was cut off" if cut else f"goals {', '.join(open_goals)} are open"
        nm = NewMessage(
            "user",
            f"[Continue] The task is not finished ({why}). Continue with the next step, "
            "or finish the open goals with the goal tool.",
            kind="nudge",
            metadata={"nudge": "continuation"},
            goal_id=self.goals.focus,
        )
        with self.store.write() as w:
            (msg,) = self._append(w, [nm])
        self._emit("nudge", {"name": "continuation", "text": nm.content}, msg.sequence)
        return True

    def _on_stream(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._emit("text_delta", {"text": event.text})

    def _on_retry(self, notice: RetryNotice) -> None:
        self._emit("error", {"retry": str(notice)})

    def _on_recovery(self, entry: LadderEntry) -> None:
        if entry.changed:
            self.turn.recovered.append(entry.step.value)  # kept with the next call's row
        self._emit("error", {"recovery": entry.step.value, "changed": entry.changed})

    async def _ladder_compact(self, level: str) -> bool:
        done = await self._maybe_compact(manual=True, level=level) is not None
        if done:
            self._inject_caller_skills()  # the retried call carries them too
        return done

    def _request_params(self) -> dict[str, Any]:
        """What the request carries besides messages and tools: the output limit, once
        set (``max_output_tokens`` or the ladder's escalation)."""
        return {"params": {"max_tokens": self._max_output}} if self._max_output else {}

    async def _raise_hard_limit(self, err: ModelCallError) -> bool:
        """EscalateTokens (seed B): the token hard limit and the request's output limit
        go up to ``escalation_limit``; nothing to do when both already are there."""
        budget, limit = self.monitors.budget, self.config.escalation_limit
        if budget.hard_limit >= limit and (self._max_output or 0) >= limit:
            return False
        budget.hard_limit = max(budget.hard_limit, limit)
        self._max_output = limit
        return True

    async def _multi_turn(self, err: ModelCallError) -> bool:
        nm = NewMessage(
            "user",
            "The last request was too long for the model. Continue in smaller steps: do one "
            "thing per reply and keep tool arguments short.",
            kind="nudge",
            metadata={"nudge": "multi_turn_recovery"},
        )
        with self.store.write() as w:
            self._append(w, [nm])
        return True

    def _record_call_in(
        self,
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
                trace_id=self.trace_id,
                call_index=w.next_call_index(self.trace_id),
                context=sent.view.items,
                request_sha256=sent.sha256,
                model=model,
                head_sequence=sent.head,
                response_sequence=response_seq,
                usage=dict(response.usage) if response and response.usage else None,
                latency_ms=latency_ms,
                error=json.dumps(error.to_json()) if error is not None else None,
                agent_name=self.agent_name,
                branch_type=self.branch_type,
                params={
                    "tools": not self.turn.final_only,
                    "input_tokens": sent.tokens,
                    "finish_reason": response.finish_reason if response else None,
                    **({"prepare": self.turn.prepared_from} if self.turn.prepared_from else {}),
                    **({"recovery": list(self.turn.recovered)} if self.turn.recovered else {}),
                },
            ),
            encoded=sent.encoded,
        )
        self.turn.recovered = []
