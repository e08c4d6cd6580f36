"""Re-run with recorded responses: a model backend that answers from a stored trace.

``RecordedModel`` is a ``ChatBackend`` for ``core/llm/server.py:ModelServer``, so the
runner talks real HTTP as always. The k-th request of an agent family (see
``core/replay/recording.py``) gets the k-th recorded reply of that family: its text and
tool calls, with ref ids renamed into the replay's names. Before serving, it checks the
reply still makes sense for the context it is asked with (``judge``):

1. the request is the recorded one (same sha256 up to ref names): always fine;
2. the run asks for a final answer (no tools, ``tool_choice: none``) and the reply calls
   tools, or a recorded tool is not offered: diverged;
3. the reply's arguments name a ref or an earlier call id its recorded context showed and
   the replay's context does not: diverged (the model could not have known it);
4. with an ``oracle`` — an offline model that decides from its context alone, like the
   demo's scripted model — a reply the oracle would not give now (other tool calls or
   another answer): diverged.

On divergence the model stops (``on_diverge="stop"``: this and every later request fails
with a 500 the runner surfaces, so the run ends and the failed call is recorded) or hands
over to the oracle (``"live"``: the run goes on as the oracle decides). Summary requests
(``SUMMARY_TAG``) get the oracle's summary, the recorded one for the same ask, or the
offline narrative.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.context.view import request_sha256
from core.fields_json import fields_json
from core.llm import SUMMARY_TAG, BackendReply, ChatBackend, ChatRequest
from core.llm.script import message_text
from core.llm.summarizer import is_summary_request, summarize_messages
from core.records import ToolCall
from core.replay.recording import RecordedReply, Recording, call_key
from core.replay.refmap import RefRenamer

OnDiverge = Literal["stop", "live"]
FINISH_REASONS = ("stop", "tool_calls", "length")


@dataclass(frozen=True)
class ReplayDiverged:
    """Where and why the recorded replies stopped making sense."""

    request: int
    """The replay's model request (0-based, summaries not counted) that diverged."""
    agent: str
    position: int
    """The agent family's reply number (the k-th recorded reply of that agent)."""
    source_call: int | None
    """``call_index`` of the recorded reply in the source trace."""
    reason: str
    call_index: int | None = None
    """The failed (or live-answered) call in the replay trace, once known."""

    def to_json(self) -> dict[str, Any]:
        return fields_json(
            self, "call_index", "request", "agent", "position", "source_call", "reason"
        )


@dataclass(frozen=True, slots=True)
class Served:
    """One answered request: from the recording, from the live model, or a summary."""

    request: int | None
    agent: str
    mode: Literal["recorded", "live", "summary", "refused"]
    position: int | None = None
    source_call: int | None = None
    same_context: bool | None = None
    """The request equalled the recorded one (up to ref names)."""


class ReplayStopped(RuntimeError):
    """Raised inside the backend after a divergence in ``stop`` mode (the server sends a
    500; the wording avoids words the error classifier maps to retryable kinds)."""


@dataclass
class RecordedModel:
    recording: Recording
    renamer: RefRenamer = field(default_factory=RefRenamer)
    """Source ref ids → the replay's."""
    oracle: ChatBackend | None = None
    on_diverge: OnDiverge = "stop"
    start: dict[str, int] = field(default_factory=dict)
    """Per family, the first reply to serve (a replay from call N skips the earlier ones)."""
    served: list[Served] = field(default_factory=list)
    diverged: ReplayDiverged | None = None
    strict: bool = False
    """A request that differs from its recorded one diverges at once, however well the
    recorded reply would still fit (a fork with an edit: after the edit, the model
    answers, ``core/replay/fork.py``)."""
    continuation: ChatBackend | None = None
    """What answers after a divergence in ``live`` mode instead of the oracle: a configured
    endpoint (``core/replay/endpoint.py:EndpointModel``)."""
    _next: dict[str, int] = field(default_factory=dict)
    _requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.on_diverge == "live" and self.oracle is None and self.continuation is None:
            raise ValueError("on_diverge='live' needs an oracle model or an endpoint")
        self._next = dict(self.start)
        self._inverse = self.renamer.inverse()

    # -- the backend ------------------------------------------------------------------------
    def reply(self, request: ChatRequest) -> BackendReply | Awaitable[BackendReply]:
        with self._lock:
            if is_summary_request(request.messages):
                return self._summary(request)
            serial = self._requests
            self._requests += 1
            if self.diverged is not None:
                return self._after_divergence(request, serial)
            family = self.recording.family(_system_text(request))
            agent = self.recording.agent_of(family)
            replies = self.recording.families.get(family, [])
            k = self._next.get(family, 0)
            if k >= len(replies):
                why = f"no recorded reply left for {agent} (it has {len(replies)})"
                self.diverged = ReplayDiverged(serial, agent, k, None, why)
                return self._after_divergence(request, serial)
            rec = replies[k]
            same = self._same(request, rec)
            reason = self._unsendable(request, rec) or (None if same else self._why(request, rec))
            if reason is not None:
                self.diverged = ReplayDiverged(serial, agent, k, rec.call_index, reason)
                return self._after_divergence(request, serial)
            self._next[family] = k + 1
            self.served.append(Served(serial, agent, "recorded", k, rec.call_index, same))
            return self._as_reply(rec)

    def _after_divergence(
        self, request: ChatRequest, serial: int
    ) -> BackendReply | Awaitable[BackendReply]:
        assert self.diverged is not None
        if self.on_diverge == "live" and (self.continuation or self.oracle) is not None:
            agent = self.recording.agent_of(self.recording.family(_system_text(request)))
            self.served.append(Served(serial, agent, "live"))
            if self.continuation is not None:  # awaited by the server, outside the lock
                return self.continuation.reply(request)
            assert self.oracle is not None
            return _sync_reply(self.oracle, request)
        self.served.append(Served(serial, self.diverged.agent, "refused"))
        raise ReplayStopped(
            f"replay stopped: the recorded reply no longer fits (request {self.diverged.request})"
        )

    def _summary(self, request: ChatRequest) -> BackendReply:
        self.served.append(Served(None, "main", "summary"))
        if self.oracle is not None:
            return _sync_reply(self.oracle, request)
        ask = message_text(request.messages[-1]).removeprefix(SUMMARY_TAG).strip()
        recorded = self.recording.summaries.get(self._inverse(ask))
        if recorded is not None:
            return BackendReply(text=self.renamer(recorded))
        limit = request.body.get("max_completion_tokens") or request.body.get("max_tokens")
        messages = request.messages[:-1]
        if messages and messages[0].get("role") == "system":
            messages = messages[1:]
        return BackendReply(
            text=summarize_messages(messages, max_tokens=int(limit) if limit else None)
        )

    # -- judging --------------------------------------------------------------------------
    def _same(self, request: ChatRequest, rec: RecordedReply) -> bool:
        if rec.request_sha256 is None:
            return False
        messages = self._inverse.json(list(request.messages))
        return request_sha256(messages) == rec.request_sha256

    def _unsendable(self, request: ChatRequest, rec: RecordedReply) -> str | None:
        """A reply the request's tools forbid (the request hash covers only messages)."""
        calls = rec.tool_calls
        if calls and not request.tools_allowed:
            return "the run asks for a final answer here; the recorded reply calls tools"
        missing = sorted({c.name for c in calls} - set(request.tool_names))
        if missing:
            return f"recorded tool(s) {', '.join(missing)} not offered"
        return None

    def _why(self, request: ChatRequest, rec: RecordedReply) -> str | None:
        if self.strict:
            return "the context differs from the recorded call's (an edited message)"
        return self.judge(request, rec)

    def judge(self, request: ChatRequest, rec: RecordedReply) -> str | None:
        """Why ``rec`` no longer fits ``request`` (``None``: serve it)."""
        unsendable = self._unsendable(request, rec)
        if unsendable is not None:
            return unsendable
        calls = self._calls(rec)
        shown = json.dumps(list(request.messages), ensure_ascii=False)
        before = self.recording.visible(rec)
        lost = [
            x for x in self.recording.mentioned(rec) if x in before and self.renamer(x) not in shown
        ]
        if lost:
            return f"the recorded reply names {', '.join(lost)}, no longer in the context"
        if self.oracle is not None:
            return self._oracle_disagrees(request, rec, calls)
        return None

    def _oracle_disagrees(
        self, request: ChatRequest, rec: RecordedReply, calls: tuple[ToolCall, ...]
    ) -> str | None:
        assert self.oracle is not None
        try:
            now = _sync_reply(self.oracle, request)
        except Exception as exc:  # the oracle cannot go on from this context
            return f"the model cannot go on from this context: {exc}"
        want = [call_key(c) for c in calls]
        got = [call_key(c) for c in now.tool_calls]
        if want == got and (calls or now.text == self.renamer(rec.text)):
            return None
        if not got:
            return f"the model would answer now instead of calling {_names(want)}"
        if not want:
            return f"the model would call {_names(got)} instead of answering"
        return f"the model would call {_names(got)} instead of the recorded {_names(want)}"

    # -- serving --------------------------------------------------------------------------
    def _calls(self, rec: RecordedReply) -> tuple[ToolCall, ...]:
        return tuple(ToolCall(c.id, c.name, self.renamer(c.arguments)) for c in rec.tool_calls)

    def _as_reply(self, rec: RecordedReply) -> BackendReply:
        calls = self._calls(rec)
        finish = rec.finish_reason if rec.finish_reason in FINISH_REASONS else None
        return BackendReply(text=self.renamer(rec.text), tool_calls=calls, finish_reason=finish)

    @property
    def requests(self) -> int:
        return self._requests

    def reproduced(self) -> int:
        """Requests that equalled their recorded request (up to ref names)."""
        return sum(1 for s in self.served if s.same_context)


def _system_text(request: ChatRequest) -> str:
    if request.messages and request.messages[0].get("role") == "system":
        return message_text(request.messages[0])
    return ""


def _names(keys: list[str]) -> str:
    return ", ".join(k if len(k) <= 90 else k[:87] + "..." for k in keys)


def _sync_reply(backend: ChatBackend, request: ChatRequest) -> BackendReply:
    result = backend.reply(request)
    if not isinstance(result, BackendReply):
        raise TypeError("the oracle must answer synchronously")
    return result
