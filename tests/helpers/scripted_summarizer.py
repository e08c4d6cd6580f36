"""The scripted narrative in-process (no HTTP): what tests compare the wire path with.

The product reaches the scripted narrative only over HTTP (the local server's
``ScriptedModel`` recognises ``SUMMARY_TAG``, ``core/llm/summarizer.py:ModelCompactionSummarizer``
asks it); this is the same narrative without the server, so a test can check the two agree.
"""

from __future__ import annotations

from core.context.summary_request import SummaryRequest
from core.llm.summarizer import Messages, _last_assistant_text, summarize_messages


def _notes(messages: Messages) -> str:
    said = [_last_assistant_text([m]) for m in messages if m.get("role") == "assistant"]
    return "\n".join(f"- {s}" for s in said[-5:] if s) or "- nothing durable"


class ScriptedCompactionSummarizer:
    """The context engine's ``Summarizer``, in-process and offline (no HTTP).

    ``compression`` gets ``summarize_messages`` within the request's token budget; the other
    stages (``reflection``, ``knowledge_eval``) get short notes of what the assistant said.
    ``omit_completed`` makes a lossy summarizer (for showing what the contract prevents).
    """

    def __init__(self, *, omit_completed: bool = False) -> None:
        self.omit_completed = omit_completed
        self.requests: list[SummaryRequest] = []

    async def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        if request.stage != "compression":
            return _notes(request.messages)
        return summarize_messages(
            request.messages, omit_completed=self.omit_completed, max_tokens=request.max_tokens
        )
