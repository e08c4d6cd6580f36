"""Summaries for L2 compaction: the scripted narrative, and adapters to the context engine.

The context engine's compression side branch asks a ``Summarizer`` (its protocol:
``async summarize(request) -> str``, where the request has ``stage``, ``messages``,
``max_tokens`` and ``prompt_messages()``) for a narrative; the runtime adds the contract
fields (goal, completed steps, refs, constraints, pending, failures) from its own records.
``summarize_messages`` writes the scripted narrative from the given messages only, listing
every visibly completed step as a ``[done L]`` line so the scripted model still sees those
steps as done after the compaction. ``ModelCompactionSummarizer`` asks a model through
``ChatClient``: the request's ``prompt_messages()`` with ``SUMMARY_TAG`` in front of the
closing ask and ``max_tokens`` set. Against the local server's ``ScriptedModel`` this
reaches the same narrative over the wire (the model recognises the tag and honours
``max_tokens``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from core.context.summary_request import SummaryRequest
from core.llm.script import CALL_ID_RE, Script, done_marker, message_text, read_progress
from core.tokens import count_text

if TYPE_CHECKING:
    from core.llm.client import ChatClient

SUMMARY_TAG = "[ctxlens:summarize]"
"""Marks the last message of a request as a summary request (read by ``ScriptedModel``)."""

Messages = Sequence[Mapping[str, Any]]


def is_summary_request(messages: Messages) -> bool:
    return bool(messages) and SUMMARY_TAG in message_text(messages[-1])


def summarize_messages(
    messages: Messages,
    *,
    omit_completed: bool = False,
    max_tokens: int | None = None,
    script: Script | None = None,
) -> str:
    """The scripted narrative of ``messages`` (deterministic; reads nothing else).

    With the ``script`` the model is playing, steps visibly done only through ``Done:``
    lines (a placeholder listing removed calls) are named too, as a reader would.

    Over ``max_tokens`` it first drops the step descriptions (keeping the ``[done L]``
    markers on one line), then the last note, then steps from the end.
    """
    progress = read_progress(messages)
    head = ["Summary of the conversation so far.", f"Task: {_task(messages)}"]
    done = [] if omit_completed else progress.done_labels()
    if script is not None and not omit_completed:
        seen = set(done)
        done += [st.label for st in script.steps if st.label not in seen and progress.step_done(st)]
    if omit_completed:
        steps = ["Progress: analysis in progress."]
    elif not done:
        steps = ["Completed steps: none yet."]
    else:
        described = _call_descriptions(messages)
        steps = ["Completed steps:"]
        for label in done:
            what = described.get(label) or progress.marker_lines.get(label, "")
            steps.append(f"- {done_marker(label)} {what}".rstrip())
    note = _last_assistant_text(messages)
    tail = [f"Last note: {note}"] if note else []
    text = "\n".join(head + steps + tail)
    if max_tokens is None or count_text(text) <= max_tokens or not done:
        return text
    return _fit(head, done, tail, max_tokens)


def _fit(head: list[str], done: list[str], tail: list[str], max_tokens: int) -> str:
    for keep in range(len(done), -1, -1):
        marks = " ".join(done_marker(label) for label in done[:keep])
        more = f" (and {len(done) - keep} more)" if keep < len(done) else ""
        for extra in (tail, []):
            text = "\n".join([*head, f"Completed steps: {marks}{more}", *extra])
            if count_text(text) <= max_tokens:
                return text
    return "\n".join(head)[: max(0, max_tokens)]


def _task(messages: Messages) -> str:
    for m in messages:
        if m.get("role") == "user" and SUMMARY_TAG not in message_text(m):
            text = message_text(m).strip().split("\n", 1)[0]
            return text[:300] or "(empty)"
    return "(no user message)"


def _call_descriptions(messages: Messages) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in messages:
        for call in m.get("tool_calls") or ():
            parsed = CALL_ID_RE.match(str(call.get("id") or ""))
            if parsed is None or parsed.group(1) in out:
                continue
            fn = call.get("function") or {}
            out[parsed.group(1)] = f"{fn.get('name', '?')} {_compact(fn.get('arguments'))}"
    return out


def _compact(arguments: Any) -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    text = " ".join(str(text).split())
    return text if len(text) <= 160 else text[:157] + "..."


def _last_assistant_text(messages: Messages) -> str:
    for m in reversed(messages):
        if m.get("role") == "assistant" and message_text(m).strip():
            return " ".join(message_text(m).split())[:200]
    return ""


class ModelCompactionSummarizer:
    """The context engine's ``Summarizer`` over any model reached through ``ChatClient``."""

    def __init__(self, client: ChatClient, *, model: str | None = None) -> None:
        self.client = client
        self.model = model

    @staticmethod
    def request_messages(request: SummaryRequest) -> list[dict[str, Any]]:
        """What is sent: ``prompt_messages()`` with the tag before the closing ask."""
        messages = [dict(m) for m in request.prompt_messages()]
        last = messages[-1]
        last["content"] = f"{SUMMARY_TAG} {message_text(last)}"
        return messages

    async def summarize(self, request: SummaryRequest) -> str:
        response = await self.client.complete(
            self.request_messages(request),
            model=self.model,
            params={"max_tokens": request.max_tokens},
        )
        return response.text
