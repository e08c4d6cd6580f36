"""The scripted model: deterministic, offline, and it decides only from its context.

``ScriptedModel`` is a backend for the local server (``core/llm/server.py``), so the runtime
talks to it over the real wire protocol like to any provider. For each request it
1. answers a summary request (the last message carries ``SUMMARY_TAG``) with a narrative
   written from the other messages only, within the request's ``max_tokens``
   (``core/llm/summarizer.py``);
2. otherwise picks the script whose ``match`` text is in the system message (else the
   first), reads the visible progress (``core/llm/script.py:read_progress``) and performs
   the first step that is not visibly done — its tool calls, or the final answer.

It holds no state between requests: the same messages always give the same reply (call ids
derive from a digest of the messages), and nothing it did earlier matters unless the
context still shows it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.canonical import canonical_sha256
from core.llm.backend import BackendReply, ChatRequest
from core.llm.script import Script, Step, call_id, read_progress
from core.llm.summarizer import is_summary_request, summarize_messages
from core.records import ToolCall


class ScriptError(RuntimeError):
    """The script cannot go on (e.g. its next tool is not offered in the request)."""


class ScriptedModel:
    """A chat backend that plays ``scripts`` (the first is the default)."""

    def __init__(self, *scripts: Script, omit_completed_in_summary: bool = False) -> None:
        if not scripts:
            raise ValueError("ScriptedModel needs at least one script")
        self.scripts = scripts
        self.omit_completed_in_summary = omit_completed_in_summary
        """A lossy summarizer (drops completed steps), to show what the contract prevents."""

    def reply(self, request: ChatRequest) -> BackendReply:
        messages = request.messages
        if is_summary_request(messages):
            limit = request.body.get("max_completion_tokens") or request.body.get("max_tokens")
            conversation = _conversation(messages[:-1])
            text = summarize_messages(
                conversation,
                omit_completed=self.omit_completed_in_summary,
                max_tokens=int(limit) if limit else None,
                script=self.select(conversation),
            )
            return BackendReply(text=text)
        script = self.select(messages)
        step = script.next_step(read_progress(messages))
        if step is None or step.is_final or not request.tools_allowed:
            return BackendReply(text=self._final_text(script, step))
        self._check_offered(script, step, request)
        digest = canonical_sha256(list(messages))
        calls = tuple(
            ToolCall(call_id(step.label, i, digest), c.name, c.arguments)
            for i, c in enumerate(step.calls)
        )
        return BackendReply(text=step.text, tool_calls=calls)

    def next_step(self, messages: Sequence[Mapping[str, Any]]) -> Step | None:
        """The step the model would perform for these messages (for tests and the UI)."""
        return self.select(messages).next_step(read_progress(messages))

    def select(self, messages: Sequence[Mapping[str, Any]]) -> Script:
        system = _system_text(messages)
        for script in self.scripts:
            if script.match is not None and script.match in system:
                return script
        return self.scripts[0]

    @staticmethod
    def _final_text(script: Script, step: Step | None) -> str:
        final = script.final
        if final is not None:
            return final.text
        return "Done." if step is None else f"Stopping before step {step.label}."

    @staticmethod
    def _check_offered(script: Script, step: Step, request: ChatRequest) -> None:
        offered = set(request.tool_names)
        missing = [c.name for c in step.calls if c.name not in offered]
        if missing:
            raise ScriptError(
                f"script {script.name} step {step.label}: tool(s) {', '.join(missing)} "
                "not offered in the request"
            )


def _conversation(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The messages to summarize: without a leading summarizer system line."""
    return messages[1:] if messages and messages[0].get("role") == "system" else messages


def _system_text(messages: Sequence[Mapping[str, Any]]) -> str:
    if messages and messages[0].get("role") == "system":
        content = messages[0].get("content")
        return content if isinstance(content, str) else json.dumps(content)
    return ""
